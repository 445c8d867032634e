// content <-> background: one content script per frame talks to the background about release-on-mute
// over chrome.runtime.sendMessage (the background knows the tab and frame from the sender). The
// background parses every request here; the content script parses every answer here.
import type { ReleaseConfig, ReleaseDecision } from '../release-decision.ts';
import { type GroupReport, isTickMs, parseGroupReports } from './page-content.ts';
import { isRecord, isText } from './validate.ts';

/** The frame's microphone permission as the content script's own `navigator.permissions` reports it
 * (read in the isolated world, which page scripts cannot patch; 'unknown' where the browser cannot say).
 * The background counts a frame's reports and answers its questions about devices only while this is
 * 'granted' (docs/design/security.md). */
export type MicPermission = 'granted' | 'denied' | 'prompt' | 'unknown';
const MIC_PERMISSIONS: readonly MicPermission[] = ['granted', 'denied', 'prompt', 'unknown'];

/** A PermissionState (or anything else) as a MicPermission. */
export function micPermissionOf(state: unknown): MicPermission {
  return MIC_PERMISSIONS.includes(state as MicPermission) ? (state as MicPermission) : 'unknown';
}

/** The port a frame's content script holds open while its page world wants ticks (page-content.ts
 * `ticks`: the capture watch reads in a hidden tab, whose timers Chromium runs at most once a second).
 * The content script posts TickRequests on it; the background posts `{type: 'tick'}` back
 * (background/ticks.ts) until it closes. */
export const TICKS_PORT = 'micoff-ticks';

/** On the ticks port: a tick every `every_ms` from now on (the watch's period), or one in `once_ms`. */
export type TickRequest = { every_ms: number } | { once_ms: number };

/** A TickRequest from a content script, or null when it is not one. */
export function parseTickRequest(raw: unknown): TickRequest | null {
  if (!isRecord(raw)) return null;
  if (isTickMs(raw.every_ms)) return { every_ms: raw.every_ms };
  if (isTickMs(raw.once_ms)) return { once_ms: raw.once_ms };
  return null;
}

export type ContentToBackground =
  /** This frame's capture devices (empty when the frame goes away or stops capturing). */
  | { type: 'release_state'; url: string; mic: MicPermission; groups: GroupReport[] }
  /** May the device with this label be released now? Answered with a ReleasePolicyAnswer. */
  | { type: 'release_policy'; url: string; mic: MicPermission; label: string }
  /** The release settings for this site (while the frame captures, and when the settings change).
   * Answered with a ReleaseConfig. */
  | { type: 'release_config'; url: string };

/** The background's answer to release_policy (releaseDecision's verdict). */
export type ReleasePolicyAnswer = ReleaseDecision;

/** A request from a content script, or null when it is not one. */
export function parseContentToBackground(m: unknown): ContentToBackground | null {
  if (!isRecord(m) || typeof m.url !== 'string') return null;
  const url = m.url;
  const mic = MIC_PERMISSIONS.includes(m.mic as MicPermission) ? (m.mic as MicPermission) : null;
  switch (m.type) {
    case 'release_state': {
      const groups = parseGroupReports(m.groups);
      return groups && mic ? { type: 'release_state', url, mic, groups } : null;
    }
    case 'release_policy':
      return isText(m.label) && mic ? { type: 'release_policy', url, mic, label: m.label } : null;
    case 'release_config':
      return { type: 'release_config', url };
    default:
      return null;
  }
}

/** The background's answer to release_policy; null when there was none or it is malformed. */
export function parsePolicyAnswer(a: unknown): { allow: boolean; reason: string | null } | null {
  if (!isRecord(a) || typeof a.allow !== 'boolean') return null;
  return { allow: a.allow, reason: isText(a.reason) ? a.reason : null };
}

/** The background's answer to release_config; null when there was none or it is malformed. */
export function parseConfigAnswer(a: unknown): ReleaseConfig | null {
  if (!isRecord(a) || typeof a.release !== 'boolean') return null;
  if (typeof a.delay_ms !== 'number' || !Number.isFinite(a.delay_ms)) return null;
  const paths = typeof a.paths === 'boolean' ? a.paths : true;
  const keepalive = typeof a.keepalive_ms === 'number' && Number.isFinite(a.keepalive_ms);
  return {
    delay_ms: a.delay_ms,
    release: a.release,
    reason: isText(a.reason) ? a.reason : null,
    paths,
    ...(keepalive ? { keepalive_ms: a.keepalive_ms as number } : {}),
    keep_sending: typeof a.keep_sending === 'boolean' ? a.keep_sending : null,
  };
}
