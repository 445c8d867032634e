import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NATIVE_RELEASE_MARGIN_MS } from '../shared/firefox-release.ts';
import type { TabReleaseView } from '../shared/messages/popup-background.ts';
import type { AudioStream, Processes } from '../shared/protocol.ts';
import { FakeTimers, recordStream } from './fakes.test-util.ts';
import {
  createNativeReleaseWatch,
  type NativeReleaseFacts,
  nativeReleaseVerdict,
  tabStreams,
  WHY,
} from './native-release.ts';
import { browserPids } from './release-feature.ts';

const DELAY = 3000;
const MARGIN = 2000;
const MUTE = 10_000;
const DEADLINE = MUTE + DELAY + MARGIN;

const facts = (over: Partial<NativeReleaseFacts>): NativeReleaseFacts => ({
  now_ms: MUTE + 100,
  delay_ms: DELAY,
  margin_ms: MARGIN,
  muted_since_ms: MUTE,
  server: { open: 1, seen_open: true },
  left_ms: null,
  shared: false,
  ...over,
});

test('nativeReleaseVerdict: the rule, case by case', () => {
  const cases: [string, Partial<NativeReleaseFacts>, unknown][] = [
    ['not muted', { muted_since_ms: null }, { state: 'idle' }],
    ['muted, stream open, before the deadline', {}, { state: 'pending', deadline_ms: DEADLINE }],
    [
      'muted, stream open, at the deadline',
      { now_ms: DEADLINE },
      { state: 'not_in_effect', open_ms: DELAY + MARGIN },
    ],
    [
      'muted, stream open past the deadline',
      { now_ms: DEADLINE + 4000 },
      { state: 'not_in_effect', open_ms: DELAY + MARGIN + 4000 },
    ],
    [
      'left 300 ms after the mute',
      { now_ms: MUTE + 400, server: { open: 0, seen_open: true }, left_ms: MUTE + 300 },
      { state: 'in_effect', after_ms: 300, late: false },
    ],
    [
      'left at once (delay 0: the stream went before the background heard of the mute)',
      { now_ms: MUTE + 50, server: { open: 0, seen_open: true }, left_ms: MUTE },
      { state: 'in_effect', after_ms: 0, late: false },
    ],
    [
      'left on the deadline: still on time',
      { now_ms: DEADLINE + 10, server: { open: 0, seen_open: true }, left_ms: DEADLINE },
      { state: 'in_effect', after_ms: DELAY + MARGIN, late: false },
    ],
    [
      'left after the deadline (Firefox’s own delay is longer): in effect, late',
      { now_ms: MUTE + 9000, server: { open: 0, seen_open: true }, left_ms: MUTE + 8000 },
      { state: 'in_effect', after_ms: 8000, late: true },
    ],
    [
      'left, then the host lost the server: what was seen stands',
      { server: null, left_ms: MUTE + 300 },
      { state: 'in_effect', after_ms: 300, late: false },
    ],
    ['no host or no audio server', { server: null }, { state: 'unknown', why: WHY.host }],
    [
      'no host, past the deadline',
      { server: null, now_ms: DEADLINE + 1 },
      { state: 'unknown', why: WHY.host },
    ],
    [
      'open past the deadline, but another tab holds the microphone unmuted',
      { now_ms: DEADLINE + 1, shared: true },
      { state: 'unknown', why: WHY.shared },
    ],
    [
      'never seen at the server (labels matched no stream)',
      { now_ms: DEADLINE + 1, server: { open: 0, seen_open: false }, left_ms: null },
      { state: 'unknown', why: WHY.unseen },
    ],
    [
      'gone before the mute (left earlier, not since)',
      { now_ms: DEADLINE + 1, server: { open: 0, seen_open: true }, left_ms: MUTE - 500 },
      { state: 'unknown', why: WHY.gone },
    ],
    [
      'gone before the mute, before the deadline: still waiting',
      { server: { open: 0, seen_open: true }, left_ms: MUTE - 500 },
      { state: 'pending', deadline_ms: DEADLINE },
    ],
    [
      'a delay of 0: the deadline is the margin',
      { delay_ms: 0, now_ms: MUTE + MARGIN },
      { state: 'not_in_effect', open_ms: MARGIN },
    ],
  ];
  for (const [name, over, want] of cases) assert.deepEqual(nativeReleaseVerdict(facts(over)), want, name);
});

const ffStream = (index: number, description: string, extra: Record<string, unknown> = {}): AudioStream =>
  recordStream(index, {
    application_name: 'Firefox',
    application_process_binary: 'firefox-esr',
    application_process_id: 500,
    device_description: description,
    ...extra,
  });

test('tabStreams: this Firefox’s record streams on the tab’s sources only', () => {
  const streams = [
    ffStream(1, 'Mic'),
    ffStream(2, 'USB'),
    ffStream(3, 'Mic', { application_process_id: 900 }), // another Firefox (profile)
    recordStream(4, { device_description: 'Mic' }), // Chromium
    ffStream(5, 'Mic', { kind: 'playback' }),
    ffStream(6, 'Mic', { device_description: null, device_props: { 'device.description': 'Mic' } }),
  ];
  const idx = (labels: string[], pids: Set<number> | null) =>
    tabStreams(streams, labels, pids).map((s) => s.index);
  assert.deepEqual(idx(['Mic'], new Set([500, 501])), [1, 6]);
  assert.deepEqual(idx(['Mic'], null), [1, 3, 6], 'without the pids, any Firefox counts');
  assert.deepEqual(idx(['Mic', 'USB'], new Set([500])), [1, 2, 6]);
  assert.deepEqual(idx([], null), []);
});

test('browserPids: the Firefox that started the host, else unknown', () => {
  const procs = (family: 'firefox' | 'chromium' | 'unknown'): Processes => ({
    browser: { pid: 500, family, source: 'parent' },
    processes: [
      { pid: 500, ppid: 1, comm: 'firefox-esr', role: 'browser', family: 'firefox', cmdline: '' },
      { pid: 510, ppid: 500, comm: 'Web Content', role: 'content', family: 'firefox', cmdline: '' },
      { pid: 600, ppid: 1, comm: 'pulseaudio', role: 'audio_server', family: null, cmdline: '' },
    ],
    audio_server: [],
    processes_omitted: 0,
  });
  assert.deepEqual([...(browserPids(procs('firefox')) ?? [])], [500, 510]);
  assert.equal(browserPids(procs('unknown')), null);
  assert.equal(browserPids({ ...procs('firefox'), browser: null }), null);
});

/** A muted (or not) Firefox tab capturing from `labels`. */
const view = (muted: boolean, since: number | null, labels = ['Mic']): TabReleaseView => ({
  origin: 'https://meet.example',
  state: 'capturing',
  since_ms: 1,
  reason: null,
  labels,
  muted,
  muted_since_ms: muted ? since : null,
});

function watch() {
  const timers = new FakeTimers();
  timers.now = 1000;
  const touched: number[] = [];
  const w = createNativeReleaseWatch({
    now: () => timers.now,
    setTimeout: (cb, ms) => timers.setTimeout(cb, ms),
    clearTimeout: (h) => timers.clearTimeout(h),
    onTab: (t) => touched.push(t),
  });
  w.setDelay(DELAY);
  touched.length = 0;
  return { w, timers, touched };
}

const TAB = 7;
const open = { connected: true, streams: [ffStream(1, 'Mic')] };
const gone = { connected: true, streams: [] };

test('watch: pref on, the stream leaves after the mute: in effect, and the finding stays for the next looks', () => {
  const { w, timers, touched } = watch();
  w.setAudio(open);
  assert.equal(w.update(TAB, view(false, null), [])?.now.state, 'idle');
  timers.now = 5000;
  const muted = w.update(TAB, view(true, 5000), []);
  assert.deepEqual(muted?.now, { state: 'pending', deadline_ms: 5000 + DELAY + MARGIN });
  assert.equal(muted?.command, `micoff-host install --firefox-release --release-delay-ms ${DELAY}`);
  assert.equal(muted?.margin_ms, NATIVE_RELEASE_MARGIN_MS);
  timers.now = 8100;
  w.setAudio(gone);
  assert.deepEqual(touched, [TAB], 'the stream leaving asks for a new look at the tab');
  const after = w.update(TAB, view(true, 5000), []);
  assert.deepEqual(after?.now, { state: 'in_effect', after_ms: 3100, late: false });
  // Unmuted: the stream comes back; the last finding is still there to show.
  timers.now = 9000;
  w.setAudio(open);
  const unmuted = w.update(TAB, view(false, null), []);
  assert.equal(unmuted?.now.state, 'idle');
  assert.deepEqual(unmuted?.last, { state: 'in_effect', after_ms: 3100, late: false, at_ms: 8100 });
  assert.equal(timers.pending(), 0, 'no deadline left waiting');
});

test('watch: pref off, the stream stays: not in effect once the deadline passes (a timer asks for the look)', () => {
  const { w, timers, touched } = watch();
  w.setAudio(open);
  w.update(TAB, view(false, null), []);
  timers.now = 5000;
  assert.equal(w.update(TAB, view(true, 5000), [])?.now.state, 'pending');
  timers.advance(DELAY + MARGIN + 1);
  assert.deepEqual(touched, [TAB], 'the deadline asks for a new look');
  const v = w.update(TAB, view(true, 5000), []);
  assert.equal(v?.now.state, 'not_in_effect');
  assert.equal(v?.last?.state, 'not_in_effect');
  // The stream leaves much later (Firefox's own delay was long): the finding turns to in effect, late.
  timers.now = 5000 + 12_000;
  w.setAudio(gone);
  assert.deepEqual(w.update(TAB, view(true, 5000), [])?.now, {
    state: 'in_effect',
    after_ms: 12_000,
    late: true,
  });
});

test('watch: a host disconnect is not a release; unknown until the server is seen again', () => {
  const { w, timers } = watch();
  w.setAudio(open);
  w.update(TAB, view(false, null), []);
  timers.now = 5000;
  w.update(TAB, view(true, 5000), []);
  timers.now = 6000;
  w.setAudio({ connected: false, streams: [] });
  assert.deepEqual(w.update(TAB, view(true, 5000), [])?.now, { state: 'unknown', why: WHY.host });
  w.setAudio(open);
  timers.now = 5000 + DELAY + MARGIN;
  assert.equal(w.update(TAB, view(true, 5000), [])?.now.state, 'not_in_effect');
});

test('watch: another tab on the same microphone, unmuted, makes a lingering stream prove nothing', () => {
  const { w, timers } = watch();
  w.setAudio(open);
  w.update(TAB, view(false, null), []);
  timers.now = 5000 + DELAY + MARGIN;
  const other = view(false, null, ['Mic']);
  assert.deepEqual(w.update(TAB, view(true, 5000), [other])?.now, { state: 'unknown', why: WHY.shared });
  const elsewhere = view(false, null, ['USB']);
  assert.equal(w.update(TAB, view(true, 5000), [elsewhere])?.now.state, 'not_in_effect');
  const mutedToo = view(true, 4000, ['Mic']);
  assert.equal(w.update(TAB, view(true, 5000), [mutedToo])?.now.state, 'not_in_effect');
});

test('watch: micoff’s delay comes from the settings, into the deadline and the command', () => {
  const { w, timers, touched } = watch();
  w.setAudio(open);
  w.update(TAB, view(false, null), []);
  w.setDelay(750);
  assert.deepEqual(touched, [TAB], 'a new delay asks for a new look');
  timers.now = 5000;
  const v = w.update(TAB, view(true, 5000), []);
  assert.deepEqual(v?.now, { state: 'pending', deadline_ms: 5000 + 750 + MARGIN });
  assert.equal(v?.command, 'micoff-host install --firefox-release --release-delay-ms 750');
  assert.equal(v?.delay_ms, 750);
});

test('watch: another Firefox’s stream on the microphone is left out once the host named this one', () => {
  const { w, timers } = watch();
  w.setAudio({
    connected: true,
    streams: [ffStream(1, 'Mic'), ffStream(2, 'Mic', { application_process_id: 900 })],
  });
  w.setBrowserPids(new Set([500]));
  w.update(TAB, view(false, null), []);
  timers.now = 5000;
  w.update(TAB, view(true, 5000), []);
  timers.now = 5300;
  // Ours leaves; the other profile's stays.
  w.setAudio({ connected: true, streams: [ffStream(2, 'Mic', { application_process_id: 900 })] });
  assert.deepEqual(w.update(TAB, view(true, 5000), [])?.now, {
    state: 'in_effect',
    after_ms: 300,
    late: false,
  });
});

test('watch: a tab that stops capturing is forgotten, with its deadline', () => {
  const { w, timers } = watch();
  w.setAudio(open);
  w.update(TAB, view(false, null), []);
  timers.now = 5000;
  w.update(TAB, view(true, 5000), []);
  assert.equal(timers.pending(), 1);
  assert.equal(w.update(TAB, null, []), null);
  assert.equal(timers.pending(), 0);
  assert.deepEqual(w.tabs(), []);
});
