// The native host connection's status as the background reports it (popup, tests).
import type { Version } from './protocol.ts';

/** The command that installs the host manifests for the user's browsers. */
export const INSTALL_COMMAND = 'micoff-host install';

export type HostState = 'connecting' | 'connected' | 'not_installed' | 'error' | 'stopped';

export interface HostStatus {
  state: HostState;
  /** The browser's reason for the last disconnect, or what went wrong (for `not_installed` / `error`). */
  message: string | null;
  /** What the user can run to fix it (`not_installed`, and `error` when the host is not allowed). */
  fix_command: string | null;
  /** The host's `version` answer while connected. */
  version: Version | null;
  /** Unsuccessful connection attempts since the last good connection. */
  attempts: number;
  /** When (ms since epoch) the next reconnect is due; null unless waiting to reconnect. */
  retry_at_ms: number | null;
  since_ms: number;
  /** The last time a good connection dropped (the host exited, crashed or was killed) and the browser's
   * reason; kept once connected again, so the popup can say the host was restarted. */
  last_drop: { at_ms: number; reason: string } | null;
}
