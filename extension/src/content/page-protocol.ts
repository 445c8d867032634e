// Messages between the MAIN-world interposition (page.js) and the isolated-world bridge (content.js),
// carried as JSON strings in CustomEvents on the frame's window. The page's own scripts can read and
// forge them, so the content side validates every message and lets the page world do nothing beyond
// reporting its own tracks' states and asking whether a release is allowed.

export const PAGE_EVENT = 'micoff:page';
export const CONTENT_EVENT = 'micoff:content';

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
   * on for all, false when off for any, null when unknown (issue 12). */
  echo_cancellation?: boolean | null;
  /** Set when micoff kept echo cancellation on against a `latency` request (the popup says why). */
  latency_guard?: string | null;
}

export type PageToContent =
  | { type: 'hello' }
  | { type: 'state'; groups: GroupReport[] }
  | { type: 'policy_query'; query: number; label: string };

export type ContentToPage =
  | { type: 'config'; delay_ms: number; release: boolean; reason: string | null }
  | { type: 'policy'; query: number; allow: boolean; reason: string | null };

const STATES: readonly GroupState[] = ['capturing', 'released', 'not_released', 'ended'];
const MAX_GROUPS = 32;
const MAX_TEXT = 200;

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}
const text = (v: unknown): v is string => typeof v === 'string' && v.length <= MAX_TEXT;
const count = (v: unknown): v is number => Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 1000;

function parseGroup(v: unknown): GroupReport | null {
  if (!isRecord(v)) return null;
  const { id, state, since_ms, reason, label, tracks, enabled, echo_cancellation, latency_guard } = v;
  if (!text(id) || !STATES.includes(state as GroupState)) return null;
  if (typeof since_ms !== 'number' || !Number.isFinite(since_ms)) return null;
  if (reason !== null && !text(reason)) return null;
  if (!text(label) || !count(tracks) || !count(enabled)) return null;
  const ec = echo_cancellation === true || echo_cancellation === false ? echo_cancellation : null;
  const guard = typeof latency_guard === 'string' && latency_guard.length <= 400 ? latency_guard : null;
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
  };
}

/** A message from the page world, or null when it is not one (anything the page may have forged is
 * held to the same shape; the worst it can do is misreport its own tab). */
export function parsePageMessage(raw: unknown): PageToContent | null {
  if (typeof raw !== 'string' || raw.length > 64 * 1024) return null;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!isRecord(v)) return null;
  switch (v.type) {
    case 'hello':
      return { type: 'hello' };
    case 'state': {
      if (!Array.isArray(v.groups) || v.groups.length > MAX_GROUPS) return null;
      const groups = v.groups.map(parseGroup);
      if (groups.some((g) => g === null)) return null;
      return { type: 'state', groups: groups as GroupReport[] };
    }
    case 'policy_query':
      if (!count(v.query) && !(Number.isSafeInteger(v.query) && (v.query as number) >= 0)) return null;
      if (!text(v.label)) return null;
      return { type: 'policy_query', query: v.query as number, label: v.label };
    default:
      return null;
  }
}

/** A message from the content script (the page world trusts only its shape, like anything else). */
export function parseContentMessage(raw: unknown): ContentToPage | null {
  if (typeof raw !== 'string') return null;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return null;
  }
  if (!isRecord(v)) return null;
  const reason = v.reason === null || typeof v.reason === 'string' ? (v.reason as string | null) : null;
  if (v.type === 'config' && typeof v.delay_ms === 'number' && typeof v.release === 'boolean') {
    return { type: 'config', delay_ms: v.delay_ms, release: v.release, reason };
  }
  if (v.type === 'policy' && typeof v.query === 'number' && typeof v.allow === 'boolean') {
    return { type: 'policy', query: v.query, allow: v.allow, reason };
  }
  return null;
}
