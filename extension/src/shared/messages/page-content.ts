// page <-> content: between the MAIN-world interposition (page.js) and the isolated-world bridge
// (content.js), carried as JSON strings over the frame's secret channel (page-channel.ts: CustomEvents
// whose names page scripts cannot know, so they can neither forge nor read them). Each side still parses
// what it receives here: the page world can do nothing beyond reporting its own tracks' states and
// asking whether a release is allowed.
import { type FirstAudio, parseFirstAudio } from '../first-words.ts';
import type { ReleaseConfig } from '../release-decision.ts';
import { isCount, isRecord, isText, parseJsonRecord } from './validate.ts';

export type GroupState = 'capturing' | 'released' | 'not_released' | 'ended';

/** One capture device in one frame, as the page world sees it. */
export interface GroupReport {
  /** Unique within the frame (realm number and group number). */
  id: string;
  state: GroupState;
  /** Date.now() when the state began. */
  since_ms: number;
  /** Why a muted device is kept open (not_released), else null. */
  reason: string | null;
  /** The track's label (the source's description on Linux): matches the host's view of the source. */
  label: string;
  /** Live tracks (clones included) on the device and how many of them are enabled. */
  tracks: number;
  enabled: number;
  /** Echo cancellation on the device's live tracks as the browser granted it (getSettings): true when
   * on for all, false when off for any, null when unknown. */
  echo_cancellation?: boolean | null;
  /** Set when micoff kept echo cancellation on against a `latency` request (the popup says why). */
  latency_guard?: string | null;
  /** Date.now() when every live track on the device was disabled; null while one is enabled. Sent by
   * the Firefox build's page world (page/firefox/mute-observer.ts), where the browser's own release follows
   * the mute and the background checks it against the audio server (background/native-release.ts). */
  muted_since_ms?: number | null;
  /** Firefox build: since when micoff keeps the muted device's senders from sending (page/firefox/quiet.ts:
   * Firefox's own release closes the device but keeps encoding and sending the disabled track's
   * silence); null while it does not. */
  quiet_since_ms?: number | null;
  /** The site's microphone permission may be a one-time one ("Allow this time"): micoff keeps it alive
   * while the tab is in the background and released (page/chromium/guards/grant-keeper.ts); the popup says so. */
  grant_may_expire?: boolean;
  /** Chromium build: how long the device's latest open (the page's getUserMedia or micoff's reopen) took
   * to deliver its first audio (shared/first-words.ts); null until measured. */
  first_audio?: FirstAudio | null;
}

export type PageToContent =
  /** The page world is installed (sent once per frame). */
  | { type: 'hello' }
  /** Every group of the frame (all realms), whenever one changes. */
  | { type: 'state'; groups: GroupReport[] }
  /** May the device with this label be released now? Answered by `policy` with the same query. */
  | { type: 'policy_query'; query: number; label: string }
  /** Every how many ms the frame wants `tick`s (0: none): its capture watch reads while its tab is
   * hidden, where Chromium runs the page's timers at most once a second
   * (page/chromium/guards/capture-watch.ts). */
  | { type: 'ticks'; every_ms: number }
  /** One `tick` in this many ms, besides the period (while ticks are on). */
  | { type: 'tick_once'; in_ms: number };

export type ContentToPage =
  /** The release settings for this frame's site, as the background decided them. */
  | ({ type: 'config' } & ReleaseConfig)
  | { type: 'policy'; query: number; allow: boolean; reason: string | null }
  /** A wake-up from the background, while the frame wants them (`ticks`). */
  | { type: 'tick' };

const isTime = (v: unknown): v is number => typeof v === 'number' && Number.isFinite(v);
/** The tick periods and delays a frame may ask for (`ticks`, `tick_once`), and the background serves
 * (background/ticks.ts). */
export const TICK_MIN_MS = 50;
export const TICK_MAX_MS = 10_000;
/** A tick period or delay the background serves. */
export const isTickMs = (v: unknown): v is number => isTime(v) && v >= TICK_MIN_MS && v <= TICK_MAX_MS;

const STATES: readonly GroupState[] = ['capturing', 'released', 'not_released', 'ended'];
export const MAX_GROUPS = 32;
const MAX_PAGE_MESSAGE = 64 * 1024;

export function parseGroupReport(v: unknown): GroupReport | null {
  if (!isRecord(v)) return null;
  const {
    id,
    state,
    since_ms,
    reason,
    label,
    tracks,
    enabled,
    echo_cancellation,
    latency_guard,
    muted_since_ms,
    quiet_since_ms,
    grant_may_expire,
    first_audio,
  } = v;
  if (!isText(id) || !STATES.includes(state as GroupState)) return null;
  if (!isTime(since_ms)) return null;
  if (reason !== null && !isText(reason)) return null;
  if (!isText(label) || !isCount(tracks) || !isCount(enabled)) return null;
  const ec = echo_cancellation === true || echo_cancellation === false ? echo_cancellation : null;
  const guard = typeof latency_guard === 'string' && latency_guard.length <= 400 ? latency_guard : null;
  if (muted_since_ms !== undefined && muted_since_ms !== null && !isTime(muted_since_ms)) return null;
  // A device with an enabled track is not muted, whatever the sender says.
  const mutedSince = isTime(muted_since_ms) && enabled === 0 ? muted_since_ms : null;
  if (quiet_since_ms !== undefined && quiet_since_ms !== null && !isTime(quiet_since_ms)) return null;
  // Quiet senders only while muted.
  const quietSince = isTime(quiet_since_ms) && mutedSince !== null ? quiet_since_ms : null;
  return {
    id,
    state: state as GroupState,
    since_ms,
    reason,
    label,
    tracks,
    enabled,
    echo_cancellation: ec,
    latency_guard: guard,
    muted_since_ms: mutedSince,
    quiet_since_ms: quietSince,
    grant_may_expire: grant_may_expire === true,
    first_audio: parseFirstAudio(first_audio),
  };
}

/** A frame's groups (at most MAX_GROUPS, each well-formed), or null. */
export function parseGroupReports(v: unknown): GroupReport[] | null {
  if (!Array.isArray(v) || v.length > MAX_GROUPS) return null;
  const groups = v.map(parseGroupReport);
  return groups.some((g) => g === null) ? null : (groups as GroupReport[]);
}

/** A message from the page world, or null when it is not one (anything the page may have forged is
 * held to the same shape; the worst it can do is misreport its own tab). */
export function parsePageMessage(raw: unknown): PageToContent | null {
  const v = parseJsonRecord(raw, MAX_PAGE_MESSAGE);
  if (!v) return null;
  switch (v.type) {
    case 'hello':
      return { type: 'hello' };
    case 'state': {
      const groups = parseGroupReports(v.groups);
      return groups ? { type: 'state', groups } : null;
    }
    case 'policy_query':
      if (!Number.isSafeInteger(v.query) || (v.query as number) < 0) return null;
      if (!isText(v.label)) return null;
      return { type: 'policy_query', query: v.query as number, label: v.label };
    case 'ticks':
      return v.every_ms === 0 || isTickMs(v.every_ms) ? { type: 'ticks', every_ms: v.every_ms } : null;
    case 'tick_once':
      return isTickMs(v.in_ms) ? { type: 'tick_once', in_ms: v.in_ms } : null;
    default:
      return null;
  }
}

/** A message from the content script (the page world trusts only its shape, like anything else). */
export function parseContentMessage(raw: unknown): ContentToPage | null {
  const v = parseJsonRecord(raw, Number.POSITIVE_INFINITY);
  if (!v) return null;
  const reason = v.reason === null || typeof v.reason === 'string' ? (v.reason as string | null) : null;
  if (v.type === 'config' && typeof v.delay_ms === 'number' && typeof v.release === 'boolean') {
    const paths = typeof v.paths === 'boolean' ? v.paths : true;
    const keepalive = isTime(v.keepalive_ms) ? { keepalive_ms: v.keepalive_ms } : {};
    const keep_sending = typeof v.keep_sending === 'boolean' ? v.keep_sending : null;
    return {
      type: 'config',
      delay_ms: v.delay_ms,
      release: v.release,
      reason,
      paths,
      ...keepalive,
      keep_sending,
    };
  }
  if (v.type === 'policy' && typeof v.query === 'number' && typeof v.allow === 'boolean') {
    return { type: 'policy', query: v.query, allow: v.allow, reason };
  }
  if (v.type === 'tick') return { type: 'tick' };
  return null;
}
