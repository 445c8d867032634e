import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { GroupReport } from '../shared/messages/page-content.ts';
import { TabFrames, tabViewOf } from './tab-state.ts';

const g = (state: GroupReport['state'], since_ms: number, reason: string | null = null): GroupReport => ({
  id: `${since_ms}`,
  state,
  since_ms,
  reason,
  label: 'mic',
  tracks: 1,
  enabled: state === 'capturing' ? 1 : 0,
});

test('tabViewOf folds frames: capturing > kept open > released', () => {
  const url = 'https://meet.example.com/room';
  const cases: [GroupReport[][], string | null, number | null][] = [
    [[], null, null],
    [[[g('ended', 1)]], null, null],
    [[[g('capturing', 5)]], 'capturing', 5],
    [[[g('released', 5)], [g('capturing', 7)]], 'capturing', 7],
    [[[g('released', 5), g('not_released', 9, 'Bluetooth headset')]], 'not_released', 9],
    [[[g('released', 5)], [g('released', 8)]], 'released', 8],
  ];
  for (const [frames, state, since] of cases) {
    const v = tabViewOf(
      frames.map((groups) => ({ url, groups })),
      url,
    );
    assert.equal(v?.state ?? null, state, JSON.stringify(frames));
    assert.equal(v?.since_ms ?? null, since);
    if (v) assert.equal(v.origin, 'https://meet.example.com');
    if (v?.state === 'not_released') assert.equal(v.reason, 'Bluetooth headset');
  }
});

test('TabFrames drops a frame that reports nothing, and the tab with its last frame', () => {
  const t = new TabFrames();
  t.set(1, 0, { url: 'https://a.example', groups: [g('capturing', 1)] });
  t.set(1, 5, { url: 'about:blank', groups: [g('released', 2)] });
  assert.equal(t.frames(1).length, 2);
  assert.equal(t.topUrl(1), 'https://a.example');
  t.set(1, 5, { url: 'about:blank', groups: [] });
  t.set(1, 0, { url: 'https://a.example', groups: [] });
  assert.deepEqual(t.all(), {});
});

test('TabFrames.hasLive: a frame may only ask about a device it reported, live', () => {
  const t = new TabFrames();
  t.set(1, 0, { url: 'https://a.example', groups: [g('capturing', 1)] });
  t.set(1, 3, { url: 'https://a.example', groups: [g('ended', 1)] });
  const cases: [number, number, string, boolean][] = [
    [1, 0, 'mic', true],
    [1, 0, 'other mic', false],
    [1, 3, 'mic', false], // ended
    [1, 7, 'mic', false], // never reported
    [2, 0, 'mic', false], // another tab
  ];
  for (const [tab, frame, label, want] of cases) assert.equal(t.hasLive(tab, frame, label), want);
});

test('tabViewOf: echo cancellation off anywhere is off, the guard note, the labels', () => {
  const url = 'https://meet.example.com/room';
  const frame = (groups: GroupReport[]) => ({ url, groups });
  const on = { ...g('capturing', 1), echo_cancellation: true };
  const off = { ...g('capturing', 2), label: 'usb mic', echo_cancellation: false };
  const guarded = { ...on, latency_guard: 'kept echo cancellation on' };
  assert.equal(tabViewOf([frame([on])], url)?.echo_cancellation, true);
  assert.equal(tabViewOf([frame([on]), frame([off])], url)?.echo_cancellation, false);
  assert.equal(tabViewOf([frame([g('capturing', 3)])], url)?.echo_cancellation, null);
  assert.equal(tabViewOf([frame([on, guarded])], url)?.latency_guard, 'kept echo cancellation on');
  assert.equal(tabViewOf([frame([on])], url)?.latency_guard, null);
  assert.deepEqual(tabViewOf([frame([on, off])], url)?.labels, ['mic', 'usb mic']);
  // An ended device's settings no longer count.
  assert.equal(tabViewOf([frame([on, { ...off, state: 'ended' }])], url)?.echo_cancellation, true);
});

test('tabViewOf: muted since the latest device went quiet, null while one is on or a device does not say', () => {
  const url = 'https://meet.example.com/room';
  const dev = (label: string, enabled: number, muted_since_ms?: number | null): GroupReport => ({
    ...g('capturing', 1),
    id: label,
    label,
    enabled,
    muted_since_ms,
  });
  const view = (...groups: GroupReport[]) => tabViewOf([{ url, groups }], url);
  assert.equal(view(dev('mic', 0, 50))?.muted_since_ms, 50);
  assert.equal(view(dev('mic', 0, 50), dev('usb', 0, 70))?.muted_since_ms, 70);
  assert.equal(view(dev('mic', 0, 50), dev('usb', 1, null))?.muted_since_ms, null);
  assert.equal(view(dev('mic', 0, 50), dev('usb', 1, null))?.muted, false);
  assert.equal(view(dev('mic', 0))?.muted_since_ms, null); // Chromium's page world does not say
  assert.equal(view(dev('mic', 0))?.muted, true);
});

test('tabViewOf: micoff’s quiet senders (Firefox) since the first device’s, only while muted', () => {
  const url = 'https://meet.example.com/room';
  const dev = (label: string, enabled: number, quiet_since_ms: number | null): GroupReport => ({
    ...g('capturing', 1),
    id: label,
    label,
    enabled,
    muted_since_ms: enabled === 0 ? 10 : null,
    quiet_since_ms,
  });
  const view = (...groups: GroupReport[]) => tabViewOf([{ url, groups }], url);
  assert.equal(view(dev('mic', 0, 50))?.quiet_since_ms, 50);
  assert.equal(view(dev('mic', 0, 50), dev('usb', 0, 70))?.quiet_since_ms, 50);
  // A device with no sender to quiet does not hide the other's.
  assert.equal(view(dev('mic', 0, 50), dev('usb', 0, null))?.quiet_since_ms, 50);
  assert.equal(view(dev('mic', 0, 50), dev('usb', 1, null))?.quiet_since_ms, null, 'not muted');
  assert.equal(view(dev('mic', 0, null))?.quiet_since_ms, null);
});
