// Firefox build: is Firefox's own release of a muted microphone in effect? micoff checks per tab at the
// audio server (docs/design/firefox-install.md "Is it in effect?"): the page world says when every
// microphone track of the tab was disabled (`muted_since_ms`), the host's audio view when the tab's
// record stream left: in effect, not in effect (still open past the delay + NATIVE_RELEASE_MARGIN_MS),
// or unknown. `nativeReleaseVerdict` is the rule (pure, table-tested); `createNativeReleaseWatch` keeps
// its inputs per tab (free of chrome.*; release-feature.ts wires it).
import { isBrowserStream, sourceDescriptionOf } from '../shared/browser-streams.ts';
import { firefoxReleaseCommand, NATIVE_RELEASE_MARGIN_MS } from '../shared/firefox-release.ts';
import type {
  AudioSnapshot,
  NativeReleaseFinding,
  NativeReleaseVerdict,
  NativeReleaseView,
  TabReleaseView,
} from '../shared/messages/popup-background.ts';
import type { AudioStream } from '../shared/protocol.ts';
import { DEFAULT_SETTINGS } from '../shared/settings.ts';

/** What one tab's mute looks like from the page world and the audio server. */
export interface NativeReleaseFacts {
  now_ms: number;
  /** micoff's release delay (Settings.releaseDelayMs): what `install --firefox-release` gives Firefox. */
  delay_ms: number;
  margin_ms: number;
  /** When every microphone track of the tab was disabled; null while one is enabled. */
  muted_since_ms: number | null;
  /** The tab's record streams (this browser's, on the tab's devices) now; null while micoff-host does
   * not see the audio server. */
  server: {
    /** Open now. */
    open: number;
    /** Was one seen open since the tab started capturing? */
    seen_open: boolean;
  } | null;
  /** When the last of them was seen leaving the server (null: none left since they were last seen
   * open). Kept when the host loses the server afterwards: it was seen. */
  left_ms: number | null;
  /** Another tab of this browser holds one of the tab's devices unmuted. */
  shared: boolean;
}

export const WHY = {
  host: 'micoff-host does not see the audio server',
  shared: 'another tab uses the same microphone unmuted, which keeps it open either way',
  unseen: 'no record stream of this tab was seen at the audio server',
  gone: 'the record stream was gone before the mute',
} as const;

/** The rule. */
export function nativeReleaseVerdict(f: NativeReleaseFacts): NativeReleaseVerdict {
  const since = f.muted_since_ms;
  if (since === null) return { state: 'idle' };
  const deadline = since + f.delay_ms + f.margin_ms;
  const s = f.server;
  // Left after the mute: only Firefox's release closes a muted tab's capture (a stop ends the mute).
  if (f.left_ms !== null && f.left_ms >= since && (s === null || s.open === 0)) {
    return { state: 'in_effect', after_ms: f.left_ms - since, late: f.left_ms > deadline };
  }
  if (!s) return { state: 'unknown', why: WHY.host };
  if (f.now_ms < deadline) return { state: 'pending', deadline_ms: deadline };
  if (s.open > 0) {
    return f.shared
      ? { state: 'unknown', why: WHY.shared }
      : { state: 'not_in_effect', open_ms: f.now_ms - since };
  }
  return { state: 'unknown', why: s.seen_open ? WHY.gone : WHY.unseen };
}

const isFinding = (v: NativeReleaseVerdict): v is NativeReleaseFinding =>
  v.state === 'in_effect' || v.state === 'not_in_effect';

/** This browser's record streams on a source described by one of `labels` (Firefox labels a track with
 * its source's description). `pids`: the browser's processes when the host named them, else any. */
export function tabStreams(
  streams: readonly AudioStream[],
  labels: readonly string[],
  pids: ReadonlySet<number> | null,
): AudioStream[] {
  return streams.filter((s) => {
    if (s.kind !== 'record' || !isBrowserStream(s, 'firefox')) return false;
    if (pids && s.application_process_id !== null && !pids.has(s.application_process_id)) return false;
    const d = sourceDescriptionOf(s);
    return d !== null && labels.includes(d);
  });
}

export interface NativeReleaseWatchDeps {
  now(): number;
  setTimeout(cb: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
  /** A tab's verdict may have changed on its own (a stream came or went, a deadline passed). */
  onTab(tabId: number): void;
}

interface TabWatch {
  labels: string[];
  mutedSince: number | null;
  /** The tab's open record streams at the last look; null while the server is not seen. */
  open: number | null;
  leftMs: number | null;
  seenOpen: boolean;
  last: (NativeReleaseFinding & { at_ms: number }) | null;
  timer: unknown;
}

export function createNativeReleaseWatch(d: NativeReleaseWatchDeps) {
  const tabs = new Map<number, TabWatch>();
  let audio: Pick<AudioSnapshot, 'connected' | 'streams'> = { connected: false, streams: [] };
  let pids: ReadonlySet<number> | null = null;
  let delayMs: number = DEFAULT_SETTINGS.releaseDelayMs;

  /** Looks at the server for one tab; returns whether its open count changed. */
  const look = (w: TabWatch): boolean => {
    const open = audio.connected ? tabStreams(audio.streams, w.labels, pids).length : null;
    if (open === w.open) return false;
    if (open !== null && open > 0) {
      w.seenOpen = true;
      w.leftMs = null;
    }
    if (open === 0 && w.open !== null && w.open > 0) w.leftMs = d.now();
    w.open = open;
    return true;
  };

  const lookAll = () => {
    for (const [tabId, w] of tabs) if (look(w)) d.onTab(tabId);
  };

  return {
    /** micoff's release delay (settings). */
    setDelay(ms: number): void {
      delayMs = ms;
      for (const tabId of tabs.keys()) d.onTab(tabId);
    },
    /** The host's audio view changed. */
    setAudio(snapshot: Pick<AudioSnapshot, 'connected' | 'streams'>): void {
      audio = snapshot;
      lookAll();
    },
    /** The browser's processes as the host names them (null: unknown, any Firefox stream counts). */
    setBrowserPids(next: ReadonlySet<number> | null): void {
      pids = next;
      lookAll();
    },
    /** The tab's view changed (null: nothing captures there any more). Returns what the popup shows
     * for Firefox's release on that tab. `others`: the other tabs' views. */
    update(
      tabId: number,
      view: TabReleaseView | null,
      others: Iterable<TabReleaseView>,
    ): NativeReleaseView | null {
      let w = tabs.get(tabId);
      if (!view) {
        if (w) d.clearTimeout(w.timer);
        tabs.delete(tabId);
        return null;
      }
      if (!w) {
        w = {
          labels: [],
          mutedSince: null,
          open: null,
          leftMs: null,
          seenOpen: false,
          last: null,
          timer: null,
        };
        tabs.set(tabId, w);
      }
      w.labels = view.labels ?? [];
      w.mutedSince = view.muted ? (view.muted_since_ms ?? null) : null;
      look(w);
      const labels = new Set(w.labels);
      const shared = [...others].some((o) => !o.muted && (o.labels ?? []).some((l) => labels.has(l)));
      const now = d.now();
      const verdict = nativeReleaseVerdict({
        now_ms: now,
        delay_ms: delayMs,
        margin_ms: NATIVE_RELEASE_MARGIN_MS,
        muted_since_ms: w.mutedSince,
        server: w.open === null ? null : { open: w.open, seen_open: w.seenOpen },
        left_ms: w.leftMs,
        shared,
      });
      d.clearTimeout(w.timer);
      w.timer = null;
      if (verdict.state === 'pending') {
        const id = tabId;
        w.timer = d.setTimeout(() => d.onTab(id), verdict.deadline_ms - now + 1);
      }
      if (isFinding(verdict)) w.last = { ...verdict, at_ms: now };
      return {
        now: verdict,
        last: w.last,
        delay_ms: delayMs,
        margin_ms: NATIVE_RELEASE_MARGIN_MS,
        command: firefoxReleaseCommand(delayMs),
      };
    },
    /** Tabs being watched (for tests and the e2e surface). */
    tabs: () => [...tabs.keys()],
  };
}

export type NativeReleaseWatch = ReturnType<typeof createNativeReleaseWatch>;
