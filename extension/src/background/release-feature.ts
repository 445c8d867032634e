// Release-on-mute, background side: takes the frames' reports (content.js) into per-tab state, keeps the
// badge and the popup's tab view current, and answers the page world from the one release decision
// (shared/release-decision.ts): the site's standing config and each "may this device be released now?".
// Trust (docs/design/security.md): a frame's report counts only while its microphone permission is
// 'granted'; a device question is answered from the host's view only for a device the frame reported
// live, from that device's source alone (else the site answer); reports and questions are rate-limited
// per frame (reports coalesced, questions over the limit keep the device open). The frames' first-audio
// measurements are learned per site and device (first-audio-store.ts), and a device whose reopen
// without micoff-host was slow is kept open while the host is not connected (shared/first-words.ts).

import { firstWordsNeedHost } from '../shared/first-words.ts';
import {
  type ContentToBackground,
  parseContentToBackground,
  type ReleasePolicyAnswer,
} from '../shared/messages/content-background.ts';
import { badgeOf } from '../shared/mic-state.ts';
import type { Processes } from '../shared/protocol.ts';
import { KEPT, releaseConfig, releaseDecision, UNANSWERED } from '../shared/release-decision.ts';
import { normalizeOrigin } from '../shared/settings.ts';
import type { BackgroundContext } from './context.ts';
import { browserFirstAudioStore, type FirstAudioStore } from './first-audio-store.ts';
import { createNativeReleaseWatch, type NativeReleaseWatch } from './native-release.ts';
import { type RateLimit, RateLimiter } from './rate-limit.ts';
import { classifySource } from './release-bluetooth.ts';
import { type FrameReport, TabFrames, tabViewOf } from './tab-state.ts';

/** Per frame. A page's interposition sends a report per state change and a question per release
 * attempt: a meeting muting and unmuting every second stays well inside these. */
export const REPORT_LIMIT: RateLimit = { burst: 20, perSecond: 5 };
export const QUERY_LIMIT: RateLimit = { burst: 10, perSecond: 2 };

export const RATE_LIMITED: ReleasePolicyAnswer = Object.freeze({ allow: false, reason: KEPT.throttled });

export interface PolicyDeps {
  settings: Pick<BackgroundContext['settings'], 'get'>;
  audio: Pick<BackgroundContext['audio'], 'snapshot'>;
  firstAudio: Pick<FirstAudioStore, 'ready' | 'get'>;
  /** Is micoff-host connected (or connecting) now: its sink waker at work? */
  hostConnected(): boolean;
}

/** The device's slow reopen figure while the host is not connected, else null (shared/first-words.ts). */
export function firstWordsMs(
  d: Omit<PolicyDeps, 'settings' | 'audio'>,
  url: string,
  label: string,
): number | null {
  const origin = normalizeOrigin(url);
  return origin ? firstWordsNeedHost(d.firstAudio.get(origin, label), d.hostConnected()) : null;
}

/** The site setting, then the Bluetooth policy for the source the label names, then first words. */
export async function releasePolicy(d: PolicyDeps, url: string, label: string): Promise<ReleasePolicyAnswer> {
  const settings = await d.settings.get();
  await d.firstAudio.ready;
  const snap = d.audio.snapshot();
  const { bluetooth } = classifySource(snap.streams, label, snap.server?.default_source_name ?? null);
  return releaseDecision({ settings, url, bluetooth, firstWordsMs: firstWordsMs(d, url, label) });
}

export interface FrameRef {
  tabId: number;
  frameId: number;
}

export interface ReleaseTrackerDeps extends PolicyDeps {
  firstAudio: FirstAudioStore;
  now(): number;
  setTimeout(cb: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /** A tab's frames changed: recompute its view and badge. */
  onTab(tabId: number): void;
}

export interface Decision {
  at_ms: number;
  tab: number;
  label: string;
  answer: ReleasePolicyAnswer;
}

/** The background's release bookkeeping, free of `chrome.*` (startRelease wires it). */
export function createReleaseTracker(d: ReleaseTrackerDeps) {
  const frames = new TabFrames();
  const reports = new RateLimiter(REPORT_LIMIT, d.now);
  const queries = new RateLimiter(QUERY_LIMIT, d.now);
  const deferred = new Map<string, { report: FrameReport; timer: unknown }>();
  const decisions: Decision[] = [];
  const keyOf = (f: FrameRef) => `${f.tabId}:${f.frameId}:`;

  const apply = (f: FrameRef, report: FrameReport) => {
    frames.set(f.tabId, f.frameId, report);
    learn(report);
    d.onTab(f.tabId);
  };

  /** The frame's first-audio measurements, under its own origin (a report repeats the latest one). */
  function learn(report: FrameReport): void {
    const origin = normalizeOrigin(report.url);
    if (!origin) return;
    for (const g of report.groups) {
      if (g.first_audio) d.firstAudio.learn(origin, g.label, g.first_audio, d.hostConnected());
    }
  }

  function report(f: FrameRef, m: Extract<ContentToBackground, { type: 'release_state' }>): void {
    const groups = m.mic === 'granted' ? m.groups : [];
    const r: FrameReport = { url: m.url, groups };
    const key = keyOf(f);
    const waiting = deferred.get(key);
    if (waiting) {
      waiting.report = r; // coalesced: the latest is applied when the bucket allows
      return;
    }
    if (reports.take(key)) {
      apply(f, r);
      return;
    }
    const entry = {
      report: r,
      timer: d.setTimeout(() => {
        deferred.delete(key);
        reports.take(key);
        apply(f, entry.report);
      }, reports.waitMs(key)),
    };
    deferred.set(key, entry);
  }

  /** The answer to a frame's release question; a lookup that fails answers UNANSWERED. */
  async function query(
    f: FrameRef,
    m: Extract<ContentToBackground, { type: 'release_policy' }>,
  ): Promise<ReleasePolicyAnswer> {
    if (!queries.take(keyOf(f))) return RATE_LIMITED;
    return lookUp(f, m).catch(() => UNANSWERED);
  }

  async function lookUp(
    f: FrameRef,
    m: Extract<ContentToBackground, { type: 'release_policy' }>,
  ): Promise<ReleasePolicyAnswer> {
    const label = m.label;
    if (m.mic !== 'granted' || !frames.hasLive(f.tabId, f.frameId, label)) {
      // The site setting alone: nothing about devices or other tabs.
      return releaseDecision({ settings: await d.settings.get(), url: m.url });
    }
    const answer = await releasePolicy(d, m.url, label);
    decisions.push({ at_ms: d.now(), tab: f.tabId, label, answer });
    if (decisions.length > 50) decisions.shift();
    return answer;
  }

  function clearTab(tabId: number): void {
    frames.clear(tabId);
    const prefix = `${tabId}:`;
    for (const [k, e] of deferred) {
      if (!k.startsWith(prefix)) continue;
      d.clearTimeout(e.timer);
      deferred.delete(k);
    }
  }

  return {
    frames,
    report,
    query,
    /** A navigation of the top frame: every frame's devices go (the new document reports afresh). */
    clearTab,
    /** The tab is gone: its buckets too. */
    removeTab(tabId: number): void {
      clearTab(tabId);
      reports.forget(`${tabId}:`);
      queries.forget(`${tabId}:`);
    },
    decisions: () => [...decisions],
  };
}

export function startRelease(ctx: BackgroundContext): void {
  // Firefox: micoff does not release there; it checks that Firefox's own release is in effect.
  const native = __BROWSER__ === 'firefox' ? startNativeReleaseWatch(ctx, (tabId) => refresh(tabId)) : null;
  const refresh = (tabId: number) => {
    const base = tabViewOf(tracker.frames.frames(tabId), tracker.frames.topUrl(tabId));
    const others = [...ctx.tabs.all()].filter(([id]) => id !== tabId).map(([, v]) => v);
    const nativeView = native?.update(tabId, base, others) ?? null;
    const view = base && native ? { ...base, native_release: nativeView } : withFirstWords(tabId, base);
    ctx.tabs.set(tabId, view);
    const b = badgeOf(view);
    chrome.action?.setBadgeText({ tabId, text: b.text }).catch(() => {});
    chrome.action?.setBadgeBackgroundColor({ tabId, color: b.color }).catch(() => {});
    chrome.action?.setTitle({ tabId, title: b.title }).catch(() => {});
  };
  /** The slowest reopen figure among the tab's devices that the first-words rule keeps open, if any. */
  const withFirstWords = (tabId: number, base: ReturnType<typeof tabViewOf>) => {
    if (!base) return base;
    const figures = tracker.frames
      .frames(tabId)
      .flatMap((f) =>
        f.groups.filter((g) => g.state !== 'ended').map((g) => firstWordsMs(policyDeps, f.url, g.label)),
      )
      .filter((ms): ms is number => ms !== null);
    return figures.length > 0 ? { ...base, first_words_need_host_ms: Math.max(...figures) } : base;
  };
  const firstAudio = browserFirstAudioStore();
  const policyDeps = {
    firstAudio,
    // Connecting counts as there: a background woken by a page asks before its host is back.
    hostConnected: () => ['connected', 'connecting'].includes(ctx.host.status().state),
  };
  const tracker = createReleaseTracker({
    ...policyDeps,
    settings: ctx.settings,
    audio: ctx.audio,
    now: Date.now,
    setTimeout: (cb, ms) => setTimeout(cb, ms),
    clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
    onTab: refresh,
  });

  chrome.runtime.onMessage.addListener((raw: unknown, sender, reply) => {
    const msg = parseContentToBackground(raw);
    if (!msg) return false;
    const tabId = sender.tab?.id;
    if (tabId === undefined || sender.id !== chrome.runtime.id) return false;
    const frame = { tabId, frameId: sender.frameId ?? 0 };
    if (msg.type === 'release_state') {
      tracker.report(frame, msg);
      return false;
    }
    if (msg.type === 'release_config') {
      // The site's own settings: nothing about devices or other tabs.
      ctx.settings.get().then(
        (s) => reply(releaseConfig(s, msg.url)),
        () => reply(undefined),
      );
      return true; // async reply
    }
    void tracker.query(frame, msg).then(reply);
    return true; // async reply
  });

  chrome.tabs?.onRemoved.addListener((tabId) => {
    tracker.removeTab(tabId);
    native?.update(tabId, null, []);
    ctx.tabs.set(tabId, null);
  });
  chrome.tabs?.onUpdated.addListener((tabId, change) => {
    // A navigation of the top frame drops every frame's devices (the new document reports afresh).
    if (change.status === 'loading' && change.url) {
      tracker.clearTab(tabId);
      refresh(tabId);
    }
  });

  ctx.expose('release', {
    frames: () => tracker.frames.all(),
    tab: (tabId: number) => ctx.tabs.get(tabId),
    decisions: tracker.decisions,
    policy: (url: string, label: string) => releasePolicy({ ...ctx, ...policyDeps }, url, label),
    firstAudio: () => firstAudio.all(),
  });
  // The first-words rule reads the host's status: the tabs' views follow it.
  ctx.host.onStatus(() => {
    for (const tabId of Object.keys(tracker.frames.all())) refresh(Number(tabId));
  });
}

/** The Firefox check's inputs: micoff's delay from the settings, the host's audio view, and the
 * browser's processes (so another Firefox's streams on the same microphone do not count). */
function startNativeReleaseWatch(ctx: BackgroundContext, onTab: (tabId: number) => void): NativeReleaseWatch {
  const watch = createNativeReleaseWatch({
    now: Date.now,
    setTimeout: (cb, ms) => setTimeout(cb, ms),
    clearTimeout: (h) => clearTimeout(h as ReturnType<typeof setTimeout>),
    onTab,
  });
  ctx.settings.get().then(
    (s) => watch.setDelay(s.releaseDelayMs),
    () => {},
  );
  ctx.settings.onChange((s) => watch.setDelay(s.releaseDelayMs));
  watch.setAudio(ctx.audio.snapshot());
  ctx.audio.onChange((a) => watch.setAudio(a));
  ctx.host.onStatus((status) => {
    if (status.state !== 'connected') {
      watch.setBrowserPids(null);
      return;
    }
    ctx.host.request({ type: 'processes' }).then(
      (p) => watch.setBrowserPids(browserPids(p)),
      () => watch.setBrowserPids(null),
    );
  });
  return watch;
}

/** The browser's own processes (Firefox's record streams come from its parent process), or null when
 * the host could not tell which browser started it. */
export function browserPids(p: Processes): Set<number> | null {
  const browser = p.browser;
  if (browser?.family !== 'firefox') return null;
  const pids = new Set([browser.pid]);
  for (const x of p.processes) if (x.family === 'firefox') pids.add(x.pid);
  return pids;
}
