import assert from 'node:assert/strict';
import { test } from 'node:test';
import { MuteBook } from './mute-book.ts';

const track = () => ({});

test('a device is muted from the moment its last enabled track is disabled, until one is enabled', () => {
  const b = new MuteBook<object>();
  const a = track();
  const clone = track();
  assert.equal(b.add(a, 'dev1', 'Mic', true, 100), true);
  assert.equal(b.add(a, 'dev1', 'Mic', true, 100), false, 'added once');
  assert.deepEqual(b.report(), [
    {
      id: 'ff.1',
      state: 'capturing',
      since_ms: 100,
      reason: null,
      label: 'Mic',
      tracks: 1,
      enabled: 1,
      muted_since_ms: null,
      quiet_since_ms: null,
    },
  ]);
  b.add(clone, 'dev1', 'Mic', true, 110);
  assert.equal(b.setEnabled(a, false, 200), true);
  assert.equal(b.report()[0]?.muted_since_ms, null, 'the clone is still enabled');
  assert.equal(b.setEnabled(clone, false, 300), true);
  assert.equal(b.report()[0]?.muted_since_ms, 300);
  assert.equal(b.setEnabled(clone, false, 350), false, 'no change, no report');
  assert.equal(b.report()[0]?.muted_since_ms, 300, 'disabling again does not move the moment');
  assert.equal(b.setEnabled(a, true, 400), true);
  assert.equal(b.report()[0]?.muted_since_ms, null);
  assert.equal(b.report()[0]?.enabled, 1);
});

test('a disabled clone added while muted keeps the moment; an enabled one ends the mute', () => {
  const b = new MuteBook<object>();
  const a = track();
  b.add(a, 'd', 'Mic', false, 100);
  assert.equal(b.report()[0]?.muted_since_ms, 100, 'a track disabled from the start is muted');
  b.add(track(), 'd', 'Mic', false, 150);
  assert.equal(b.report()[0]?.muted_since_ms, 100);
  assert.equal(b.report()[0]?.tracks, 2);
  b.add(track(), 'd', 'Mic', true, 160);
  assert.equal(b.report()[0]?.muted_since_ms, null);
});

test('stopping the last enabled track leaves the device muted from then; the last track takes the device', () => {
  const b = new MuteBook<object>();
  const on = track();
  const off = track();
  b.add(on, 'd', 'Mic', true, 100);
  b.add(off, 'd', 'Mic', false, 100);
  assert.equal(b.remove(on, 500), true);
  assert.equal(b.report()[0]?.muted_since_ms, 500);
  assert.equal(b.remove(on, 600), false, 'removed once');
  assert.equal(b.setEnabled(on, true, 650), false, 'a removed track is not watched');
  assert.equal(b.remove(off, 700), true);
  assert.deepEqual(b.report(), []);
});

test('devices are reported apart, each with its own label and id', () => {
  const b = new MuteBook<object>();
  b.add(track(), 'a', 'Built-in', true, 1);
  const usb = track();
  b.add(usb, 'b', 'USB', true, 2);
  b.setEnabled(usb, false, 3);
  const r = b.report();
  assert.deepEqual(
    r.map((g) => [g.id, g.label, g.enabled, g.muted_since_ms]),
    [
      ['ff.1', 'Built-in', 1, null],
      ['ff.2', 'USB', 0, 3],
    ],
  );
});

test('a muted device lists its tracks and since when it was on; micoff’s quiet senders are reported per device', () => {
  const b = new MuteBook<object>();
  const a = track();
  const other = track();
  b.add(a, 'dev1', 'Mic', true, 100);
  b.add(other, 'dev2', 'Headset', true, 100);
  assert.deepEqual(b.muted(), []);
  b.setEnabled(a, false, 500);
  assert.deepEqual(b.muted(), [{ key: 'dev1', mutedSince: 500, onSince: 100, tracks: [a] }]);
  assert.equal(b.deviceOf(a), 'dev1');
  assert.equal(b.deviceOf(track()), null);
  // Turned on again at 700: Firefox counts its delay from there at the next mute.
  b.setEnabled(a, true, 700);
  b.setEnabled(a, false, 900);
  assert.deepEqual(b.muted()[0], { key: 'dev1', mutedSince: 900, onSince: 700, tracks: [a] });

  assert.equal(b.setQuiet(new Set(['dev1']), 1000), true);
  assert.equal(b.setQuiet(new Set(['dev1']), 1200), false, 'keeps its moment');
  assert.deepEqual(
    b.report().map((g) => [g.label, g.quiet_since_ms]),
    [
      ['Mic', 1000],
      ['Headset', null],
    ],
  );
  assert.equal(b.setQuiet(new Set(), 1300), true);
  assert.equal(b.report()[0]?.quiet_since_ms, null);
});
