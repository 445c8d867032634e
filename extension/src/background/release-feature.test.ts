import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { MicPermission, ReleasePolicyAnswer } from '../shared/messages/content-background.ts';
import type { GroupReport } from '../shared/messages/page-content.ts';
import type { AudioSnapshot } from '../shared/messages/popup-background.ts';
import type { AudioServerInfo, AudioStream } from '../shared/protocol.ts';
import { KEPT, UNANSWERED } from '../shared/release-decision.ts';
import { DEFAULT_SETTINGS, type Settings } from '../shared/settings.ts';
import { FakeTimers, recordStream } from './fakes.test-util.ts';
import { createFirstAudioStore } from './first-audio-store.ts';
import { createReleaseTracker, QUERY_LIMIT, RATE_LIMITED, REPORT_LIMIT } from './release-feature.ts';

const stream = (index: number, source: string, description: string, bus: string): AudioStream =>
  recordStream(index, {
    device_name: source,
    device_bus: bus,
    device_props: { 'device.description': description, 'device.bus': bus },
  });

const server = { default_source_name: 'bluez_source.headset' } as AudioServerInfo;
/** Another tab (or profile) records from a Bluetooth headset, the default source. */
const OTHER_TAB_ON_BLUETOOTH: AudioSnapshot = {
  connected: true,
  server,
  reason: null,
  streams: [stream(1, 'bluez_source.headset', 'Headset', 'bluetooth')],
};
const NOBODY_CAPTURING: AudioSnapshot = { connected: true, server, reason: null, streams: [] };

const group = (label: string, state: GroupReport['state'] = 'capturing'): GroupReport => ({
  id: `0.${label}`,
  state,
  since_ms: 1,
  reason: null,
  label,
  tracks: 1,
  enabled: state === 'capturing' ? 1 : 0,
});

function setup(audio: AudioSnapshot, settings: Settings = { ...DEFAULT_SETTINGS }) {
  const timers = new FakeTimers();
  const touched: number[] = [];
  const world = { audio, host: false };
  const firstAudio = createFirstAudioStore(undefined);
  const tracker = createReleaseTracker({
    firstAudio,
    hostConnected: () => world.host,
    settings: { get: async () => settings },
    audio: { snapshot: () => world.audio },
    now: () => timers.now,
    setTimeout: (cb, ms) => timers.setTimeout(cb, ms),
    clearTimeout: (h) => timers.clearTimeout(h),
    onTab: (t) => touched.push(t),
  });
  return { tracker, timers, touched, world, firstAudio };
}

const URL_A = 'https://attacker.example/';
const ATTACKER = { tabId: 7, frameId: 0 };
const GUESSES = ['Default', 'Headset', 'Default - Headset', 'USB Mic', 'Bluetooth'];

/** The forged sequence: claim to capture from each guessed device, then ask about each. */
async function probe(audio: AudioSnapshot, mic: MicPermission): Promise<unknown> {
  const { tracker } = setup(audio);
  tracker.report(ATTACKER, { type: 'release_state', url: URL_A, mic, groups: GUESSES.map((l) => group(l)) });
  const answers: ReleasePolicyAnswer[] = [];
  for (const label of GUESSES) {
    answers.push(await tracker.query(ATTACKER, { type: 'release_policy', url: URL_A, mic, label }));
  }
  return { answers, frames: tracker.frames.all(), decisions: tracker.decisions() };
}

test('cross-tab probing: a frame without microphone permission learns nothing about other tabs (identical answers)', async () => {
  for (const mic of ['prompt', 'denied', 'unknown'] as const) {
    const quiet = await probe(NOBODY_CAPTURING, mic);
    const busy = await probe(OTHER_TAB_ON_BLUETOOTH, mic);
    assert.deepEqual(busy, quiet, mic);
    // Its forged devices do not count either: no tab view, no badge.
    assert.deepEqual((busy as { frames: unknown }).frames, {}, mic);
  }
  // The same sequence WITH permission does get the Bluetooth verdict for the devices it reported (a page
  // holding the permission can open the headset itself): the check above is not vacuous.
  const granted = (await probe(OTHER_TAB_ON_BLUETOOTH, 'granted')) as { answers: ReleasePolicyAnswer[] };
  assert.equal(granted.answers[0]?.allow, false);
  assert.match(granted.answers[0]?.reason ?? '', /Bluetooth/);
});

test('cross-tab probing: the verdict is about the frame`s own device only, no fallback to other streams', async () => {
  const { tracker } = setup(OTHER_TAB_ON_BLUETOOTH);
  const me = { tabId: 3, frameId: 0 };
  const url = 'https://meet.example/';
  // Captures from a USB mic nobody (as far as the host sees) records from: no verdict, released.
  tracker.report(me, { type: 'release_state', url, mic: 'granted', groups: [group('USB Mic')] });
  assert.deepEqual(
    await tracker.query(me, { type: 'release_policy', url, mic: 'granted', label: 'USB Mic' }),
    {
      allow: true,
      reason: null,
    },
  );
  // A label it did not report live: the site answer, not the host's view.
  assert.deepEqual(
    await tracker.query(me, { type: 'release_policy', url, mic: 'granted', label: 'Headset' }),
    {
      allow: true,
      reason: null,
    },
  );
  // Its own device on the Bluetooth source ("Default" = the default source): kept open.
  tracker.report(me, { type: 'release_state', url, mic: 'granted', groups: [group('Default', 'capturing')] });
  const a = await tracker.query(me, { type: 'release_policy', url, mic: 'granted', label: 'Default' });
  assert.equal(a.allow, false);
  assert.equal(tracker.decisions().length, 2);
});

test('cross-tab probing: a frame whose permission went away stops counting', async () => {
  const { tracker, touched } = setup(NOBODY_CAPTURING);
  const me = { tabId: 3, frameId: 2 };
  const url = 'https://meet.example/';
  tracker.report(me, { type: 'release_state', url, mic: 'granted', groups: [group('Default')] });
  assert.equal(tracker.frames.frames(3).length, 1);
  tracker.report(me, { type: 'release_state', url, mic: 'denied', groups: [group('Default')] });
  assert.equal(tracker.frames.frames(3).length, 0);
  assert.deepEqual(touched, [3, 3]);
});

test('cross-tab probing: site setting answers still apply to untrusted frames (and say nothing more)', async () => {
  const settings: Settings = {
    ...DEFAULT_SETTINGS,
    siteOverrides: { 'https://attacker.example': { release: false } },
  };
  const { tracker } = setup(OTHER_TAB_ON_BLUETOOTH, settings);
  assert.deepEqual(
    await tracker.query(ATTACKER, { type: 'release_policy', url: URL_A, mic: 'prompt', label: 'Default' }),
    { allow: false, reason: 'release is off for this site' },
  );
});

test('cross-tab probing: questions are rate-limited per frame (over the limit: kept open, nothing looked up)', async () => {
  const { tracker, timers } = setup(OTHER_TAB_ON_BLUETOOTH);
  const me = { tabId: 3, frameId: 0 };
  const other = { tabId: 3, frameId: 1 };
  const q = { type: 'release_policy', url: URL_A, mic: 'granted', label: 'Default' } as const;
  for (let i = 0; i < QUERY_LIMIT.burst; i++) assert.notDeepEqual(await tracker.query(me, q), RATE_LIMITED);
  assert.deepEqual(await tracker.query(me, q), RATE_LIMITED);
  assert.notDeepEqual(await tracker.query(other, q), RATE_LIMITED); // another frame: its own bucket
  timers.advance(1000 / QUERY_LIMIT.perSecond);
  assert.notDeepEqual(await tracker.query(me, q), RATE_LIMITED);
  assert.deepEqual(await tracker.query(me, q), RATE_LIMITED);
});

test('cross-tab probing: reports are rate-limited per frame; the latest over the limit is applied later', () => {
  const { tracker, timers, touched } = setup(NOBODY_CAPTURING);
  const me = { tabId: 4, frameId: 0 };
  const url = 'https://meet.example/';
  const send = (label: string) =>
    tracker.report(me, { type: 'release_state', url, mic: 'granted', groups: [group(label)] });
  for (let i = 0; i < REPORT_LIMIT.burst; i++) send(`m${i}`);
  assert.equal(touched.length, REPORT_LIMIT.burst);
  for (let i = 0; i < 100; i++) send(`flood${i}`);
  assert.equal(touched.length, REPORT_LIMIT.burst); // held back
  assert.equal(timers.pending(), 1); // one timer per frame, however many reports
  timers.advance(1000 / REPORT_LIMIT.perSecond);
  assert.equal(touched.length, REPORT_LIMIT.burst + 1);
  assert.equal(tracker.frames.frames(4)[0]?.groups[0]?.label, 'flood99'); // the latest, not the first
  // A closed tab drops its held-back report.
  send('again');
  send('held');
  assert.equal(timers.pending(), 1);
  tracker.removeTab(4);
  assert.equal(timers.pending(), 0);
});

test('a question the background fails to look up is answered UNANSWERED (kept open), never allowed', async () => {
  const { tracker } = setup(NOBODY_CAPTURING);
  const broken = createReleaseTracker({
    firstAudio: createFirstAudioStore(undefined),
    hostConnected: () => false,
    settings: { get: () => Promise.reject(new Error('storage gone')) },
    audio: { snapshot: () => NOBODY_CAPTURING },
    now: () => 0,
    setTimeout: () => 0,
    clearTimeout: () => {},
    onTab: () => {},
  });
  const q = { type: 'release_policy', url: URL_A, mic: 'granted', label: 'Default' } as const;
  assert.equal(await broken.query(ATTACKER, q), UNANSWERED);
  assert.deepEqual(await tracker.query(ATTACKER, q), { allow: true, reason: null });
});

test('first words: a slow open reported without the host keeps that device on that site open until the host connects', async () => {
  const { tracker, world, firstAudio } = setup(NOBODY_CAPTURING);
  const SITE = 'https://meet.example/room';
  const frame = { tabId: 3, frameId: 0 };
  const slow = { ...group('Virtual mic'), first_audio: { ms: 950, open_ms: 0, at_ms: 100 } };
  tracker.report(frame, {
    type: 'release_state',
    url: SITE,
    mic: 'granted',
    groups: [slow, group('USB mic')],
  });
  assert.deepEqual(firstAudio.get('https://meet.example', 'Virtual mic')?.no_host, {
    ms: 950,
    open_ms: 0,
    at_ms: 100,
  });
  const ask = (label: string, url = SITE, f = frame) =>
    tracker.query(f, { type: 'release_policy', url, mic: 'granted', label });
  assert.deepEqual(await ask('Virtual mic'), { allow: false, reason: KEPT.firstWords });
  assert.deepEqual(await ask('USB mic'), { allow: true, reason: null }, 'another device');
  // Another site's frame with the same device: its own measurements only.
  const other = { tabId: 4, frameId: 0 };
  tracker.report(other, {
    type: 'release_state',
    url: URL_A,
    mic: 'granted',
    groups: [group('Virtual mic')],
  });
  assert.deepEqual(await ask('Virtual mic', URL_A, other), { allow: true, reason: null });
  // The host connects: released as usual; what is measured now goes to the host's slot.
  world.host = true;
  assert.deepEqual(await ask('Virtual mic'), { allow: true, reason: null });
  const withHost = { ...group('Virtual mic'), first_audio: { ms: 40, open_ms: 0, at_ms: 200 } };
  tracker.report(frame, { type: 'release_state', url: SITE, mic: 'granted', groups: [withHost] });
  world.host = false;
  assert.deepEqual(await ask('Virtual mic'), { allow: false, reason: KEPT.firstWords });
  // A fast open without the host: released again.
  const fast = { ...group('Virtual mic'), first_audio: { ms: 45, open_ms: 0, at_ms: 300 } };
  tracker.report(frame, { type: 'release_state', url: SITE, mic: 'granted', groups: [fast] });
  assert.deepEqual(await ask('Virtual mic'), { allow: true, reason: null });
});

test('first words: a frame without the microphone permission teaches nothing', () => {
  const { tracker, firstAudio } = setup(NOBODY_CAPTURING);
  const slow = { ...group('Virtual mic'), first_audio: { ms: 950, open_ms: 0, at_ms: 100 } };
  tracker.report(ATTACKER, { type: 'release_state', url: URL_A, mic: 'prompt', groups: [slow] });
  assert.deepEqual(firstAudio.all(), {});
});
