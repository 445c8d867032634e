// Per-tab release state: every frame of a tab reports its capture devices (GroupReport); the tab's view
// (what the badge and the popup show, shared/mic-state.ts) folds them into one: capturing wins over "kept open", which wins
// over released. Pure functions plus a small store; the feature (release-feature.ts) feeds it.
import type { GroupReport } from '../shared/messages/page-content.ts';
import type { TabReleaseView } from '../shared/messages/popup-background.ts';
import { normalizeOrigin } from '../shared/settings.ts';

export interface FrameReport {
  url: string;
  groups: GroupReport[];
}

/** The tab's view from its frames' reports; null when nothing in the tab holds a microphone. Besides the
 * release state: echo cancellation over the tab's tracks (off if off anywhere), the capture-latency
 * guard's note, the devices' labels. */
export function tabViewOf(frames: Iterable<FrameReport>, topUrl: string | null): TabReleaseView | null {
  const all = [...frames];
  const view = releaseViewOf(all, topUrl);
  if (!view) return null;
  const live = all.flatMap((f) => f.groups).filter((g) => g.state !== 'ended');
  const muted = live.length > 0 && live.every((g) => g.enabled === 0);
  const ec = live.map((g) => g.echo_cancellation ?? null);
  return {
    ...view,
    echo_cancellation: ec.includes(false)
      ? false
      : ec.length > 0 && ec.every((v) => v === true)
        ? true
        : null,
    latency_guard: live.find((g) => g.latency_guard)?.latency_guard ?? null,
    labels: [...new Set(live.map((g) => g.label).filter((l) => l !== ''))],
    grant_may_expire: live.some((g) => g.grant_may_expire === true),
    muted,
    muted_since_ms: mutedSince(live, muted),
    quiet_since_ms: quietSince(live, muted),
  };
}

/** Since when micoff keeps the muted tab's senders quiet (Firefox): the earliest of its devices'
 * `quiet_since_ms`; null while not muted or none is quiet. */
function quietSince(live: GroupReport[], muted: boolean): number | null {
  const times = live.map((g) => g.quiet_since_ms ?? null).filter((t): t is number => t !== null);
  return muted && times.length > 0 ? Math.min(...times) : null;
}

/** When the tab's last enabled track was disabled: the latest of its devices' `muted_since_ms`; null
 * while not muted or when a device does not say (the Chromium page world does not). */
function mutedSince(live: GroupReport[], muted: boolean): number | null {
  if (!muted) return null;
  const times = live.map((g) => g.muted_since_ms ?? null);
  return times.every((t): t is number => t !== null) ? Math.max(...times) : null;
}

function releaseViewOf(frames: Iterable<FrameReport>, topUrl: string | null): TabReleaseView | null {
  const live: GroupReport[] = [];
  let firstUrl: string | null = null;
  for (const f of frames) {
    for (const g of f.groups) {
      if (g.state === 'ended') continue;
      live.push(g);
      firstUrl ??= f.url;
    }
  }
  if (live.length === 0) return null;
  const origin = normalizeOrigin(topUrl ?? firstUrl ?? '') ?? null;
  const of = (state: GroupReport['state']) => live.filter((g) => g.state === state);
  const capturing = of('capturing');
  if (capturing.length > 0) {
    return {
      origin,
      state: 'capturing',
      since_ms: Math.min(...capturing.map((g) => g.since_ms)),
      reason: null,
    };
  }
  const kept = of('not_released');
  if (kept.length > 0) {
    const first = kept.reduce((a, b) => (a.since_ms <= b.since_ms ? a : b));
    return { origin, state: 'not_released', since_ms: first.since_ms, reason: first.reason };
  }
  // Every device released: since the last one went.
  return { origin, state: 'released', since_ms: Math.max(...live.map((g) => g.since_ms)), reason: null };
}

/** Frames by tab: `${frameId}` -> latest report. */
export class TabFrames {
  private readonly tabs = new Map<number, Map<number, FrameReport>>();

  set(tabId: number, frameId: number, report: FrameReport): void {
    let frames = this.tabs.get(tabId);
    if (!frames) {
      frames = new Map();
      this.tabs.set(tabId, frames);
    }
    if (report.groups.length === 0) frames.delete(frameId);
    else frames.set(frameId, report);
    if (frames.size === 0) this.tabs.delete(tabId);
  }

  clear(tabId: number): void {
    this.tabs.delete(tabId);
  }

  frames(tabId: number): FrameReport[] {
    return [...(this.tabs.get(tabId)?.values() ?? [])];
  }

  /** Has this frame reported a live device with this label (the only device it may ask about)? */
  hasLive(tabId: number, frameId: number, label: string): boolean {
    const report = this.tabs.get(tabId)?.get(frameId);
    return !!report?.groups.some((g) => g.label === label && g.state !== 'ended');
  }

  /** The top frame's URL when it reported, for the origin shown in the popup. */
  topUrl(tabId: number): string | null {
    return this.tabs.get(tabId)?.get(0)?.url ?? null;
  }

  all(): Record<number, Record<number, FrameReport>> {
    const out: Record<number, Record<number, FrameReport>> = {};
    for (const [tab, frames] of this.tabs) out[tab] = Object.fromEntries(frames);
    return out;
  }
}
