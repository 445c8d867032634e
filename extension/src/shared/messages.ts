// Messages between the popup and the background, over a long-lived port named POPUP_PORT (the port's
// lifetime is "the popup is open": the background streams CPU at 1 Hz only while one is connected).

import type { CpuView } from './cpu-view.ts';
import type { DoctorFinding } from './doctor.ts';
import type { HostStatus } from './host-status.ts';
import type { AudioServerInfo, AudioStream } from './protocol.ts';

export const POPUP_PORT = 'micoff-popup';

/** What the popup shows for one tab. Filled by the release-on-mute code (issue 4) through
 * `BackgroundContext.tabs`; null while nothing in the tab captures audio. */
export interface TabReleaseView {
  origin: string | null;
  state: 'capturing' | 'released' | 'not_released';
  /** When the current state began (ms since epoch). */
  since_ms: number | null;
  /** Why the microphone is not released (e.g. "Bluetooth headset", "disabled for this site"). */
  reason: string | null;
  /** Echo cancellation on the tab's tracks as the browser granted it (issue 12); null when unknown. */
  echo_cancellation?: boolean | null;
  /** Set when micoff kept echo cancellation on against the page's `latency` request: why. */
  latency_guard?: string | null;
  /** The tab's capture devices' labels (to find its record streams at the server). */
  labels?: string[];
}

export interface AudioSnapshot {
  connected: boolean;
  server: AudioServerInfo | null;
  /** Why the audio server is not reachable (host or server side). */
  reason: string | null;
  streams: AudioStream[];
}

export type DoctorResult = { ok: true; findings: DoctorFinding[] } | { ok: false; message: string };

export type PopupToBackground =
  | { type: 'popup_hello'; tab_id: number | null }
  | { type: 'host_reconnect' }
  | { type: 'run_doctor' };

export type BackgroundToPopup =
  | { type: 'host_status'; status: HostStatus }
  | { type: 'cpu'; view: CpuView }
  | { type: 'cpu_error'; message: string }
  | { type: 'audio'; audio: AudioSnapshot }
  | { type: 'tab'; tab_id: number; tab: TabReleaseView | null }
  | { type: 'doctor'; result: DoctorResult };
