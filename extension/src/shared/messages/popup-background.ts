// popup <-> background, over a long-lived port named POPUP_PORT (the port's lifetime is "the popup is
// open": the background streams CPU and the host's history of it at 1 Hz to the connected popups). The background parses what
// a popup sends here.

import type { CpuView } from '../cpu-view.ts';
import type { DoctorFinding } from '../doctor.ts';
import type { HostStatus } from '../host-status.ts';
import type { AudioServerInfo, AudioStream, HistorySnapshot, PowerReading } from '../protocol.ts';
import { isRecord } from './validate.ts';

export const POPUP_PORT = 'micoff-popup';

/** What the popup shows for one tab. Filled by the release-on-mute code through
 * `BackgroundContext.tabs`; null while nothing in the tab captures audio. */
export interface TabReleaseView {
  origin: string | null;
  state: 'capturing' | 'released' | 'not_released';
  /** When the current state began (ms since epoch). */
  since_ms: number | null;
  /** Why the microphone is not released (e.g. "Bluetooth headset", "disabled for this site"). */
  reason: string | null;
  /** Echo cancellation on the tab's tracks as the browser granted it; null when unknown. */
  echo_cancellation?: boolean | null;
  /** Set when micoff kept echo cancellation on against the page's `latency` request: why. */
  latency_guard?: string | null;
  /** The tab's capture devices' labels (to find its record streams at the server). */
  labels?: string[];
  /** Every live track on the tab's devices is disabled (the meeting is muted). */
  muted?: boolean;
  /** Since when it is muted, where the page world says (the Firefox build); else null. */
  muted_since_ms?: number | null;
  /** Firefox build: since when micoff keeps the muted tab's senders from sending (page/firefox/quiet.ts);
   * null while it does not. */
  quiet_since_ms?: number | null;
  /** The site's microphone permission may be a one-time one: micoff keeps it alive while the tab is
   * muted in the background (page/chromium/guards/grant-keeper.ts), which the popup explains. */
  grant_may_expire?: boolean;
  /** A device of the tab is kept open while muted because its reopen without micoff-host was this slow
   * (ms; shared/first-words.ts); the popup says what the host would add. */
  first_words_need_host_ms?: number | null;
  /** Firefox: is Firefox's own release of the muted microphone in effect? (background/native-release.ts) */
  native_release?: NativeReleaseView | null;
}

/** Firefox's own release, judged at one mute from the audio server (background/native-release.ts). */
export type NativeReleaseVerdict =
  /** Not muted, or muted before this check knew the tab. */
  | { state: 'idle' }
  /** Muted: the record stream has not left yet and the deadline (delay + margin) has not passed. */
  | { state: 'pending'; deadline_ms: number }
  /** The tab's record stream left the server `after_ms` after the mute; `late` when that was past the
   * deadline (Firefox's own delay is longer than micoff's). */
  | { state: 'in_effect'; after_ms: number; late: boolean }
  /** Still open `open_ms` after the mute, past the deadline. */
  | { state: 'not_in_effect'; open_ms: number }
  /** This mute cannot tell (why, in words). */
  | { state: 'unknown'; why: string };

export type NativeReleaseFinding = Extract<NativeReleaseVerdict, { state: 'in_effect' | 'not_in_effect' }>;

export interface NativeReleaseView {
  /** The verdict on the current mute. */
  now: NativeReleaseVerdict;
  /** The latest finding on this tab (this mute's or an earlier one's) and when it was made. */
  last: (NativeReleaseFinding & { at_ms: number }) | null;
  /** micoff's release delay the check used, and its margin. */
  delay_ms: number;
  margin_ms: number;
  /** The command that switches Firefox's release on with micoff's delay (shared/firefox-release.ts). */
  command: string;
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
  | { type: 'run_doctor' }
  | { type: 'get_power' };

export type BackgroundToPopup =
  | { type: 'host_status'; status: HostStatus }
  | { type: 'cpu'; view: CpuView }
  | { type: 'cpu_error'; message: string }
  | { type: 'audio'; audio: AudioSnapshot }
  | { type: 'tab'; tab_id: number; tab: TabReleaseView | null }
  | { type: 'doctor'; result: DoctorResult }
  /** The audio path's CPU over the last minutes, marks, savings (micoff-host's history, the saved
   * figure since the browser started): on open and with every sample. */
  | { type: 'history'; history: HistorySnapshot }
  | { type: 'power'; result: { ok: true; reading: PowerReading } | { ok: false; message: string } };

/** A message from a popup, or null when it is not one. */
export function parsePopupMessage(m: unknown): PopupToBackground | null {
  if (!isRecord(m)) return null;
  switch (m.type) {
    case 'popup_hello':
      // A popup without a tab (e.g. opened on a browser page) says null; anything else is not a tab.
      return { type: 'popup_hello', tab_id: Number.isSafeInteger(m.tab_id) ? (m.tab_id as number) : null };
    case 'host_reconnect':
      return { type: 'host_reconnect' };
    case 'run_doctor':
      return { type: 'run_doctor' };
    case 'get_power':
      return { type: 'get_power' };
    default:
      return null;
  }
}
