// The page's microphone permission, kept current from the moment the page first asks for the
// microphone: one `permissions.query` then its `change` events, so a reopen reads the state at once
// (registry/reopen.ts: a reopen without permission would prompt, or wait for ever in a hidden tab)
// and the grant keeper knows what the site had before the browser answered (grant-keeper.ts).
import type { Originals } from '../../common/originals.ts';

export interface PermissionWatch {
  /** Start watching (idempotent); `first` gets the state the first query read. */
  start(first?: (state: PermissionState | null) => void): void;
  /** The state now; null while unknown (not started, no Permissions API, a failed query). */
  state(): PermissionState | null;
}

export function createPermissionWatch(o: Originals): PermissionWatch {
  let started = false;
  let state: PermissionState | null = null;
  return {
    start(first) {
      if (started) return;
      started = true;
      const read = (s: PermissionStatus) => {
        try {
          state = o.permissionState?.call(s) ?? null;
        } catch {
          state = null;
        }
      };
      o.micPermission().then(
        (status) => {
          if (status) {
            read(status);
            o.addEventListener.call(status, 'change', () => read(status));
          }
          first?.(state);
        },
        () => first?.(null),
      );
    },
    state: () => state,
  };
}
