import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  EMPTY_ENTRY,
  FIRST_AUDIO_SLOW_MS,
  firstWordsNeedHost,
  firstWordsNote,
  KEY_LEAD_MS,
  learnFirstAudio,
  reopenOutlastsKey,
  SLOW_REOPEN_WAIT_MS,
  slowReopenStreak,
} from './first-words.ts';

const at = (ms: number, at_ms: number, open_ms = 0) => ({ ms, open_ms, at_ms });

test('learn: a measurement lands in the slot of the host status it was made under; older ones change nothing', () => {
  const a = learnFirstAudio(EMPTY_ENTRY, at(950, 10), false);
  assert.deepEqual(a, { no_host: at(950, 10), host: null });
  const b = learnFirstAudio(a, at(40, 20), true);
  assert.deepEqual(b, { no_host: at(950, 10), host: at(40, 20) });
  assert.equal(learnFirstAudio(b, at(30, 10), false), b, 'the same report again');
  assert.equal(learnFirstAudio(b, at(30, 5), false), b, 'an older one');
  assert.deepEqual(learnFirstAudio(b, at(45, 30, 35), false), { no_host: at(45, 30, 35), host: at(40, 20) });
});

test('the rule: kept only without the host, and only while the latest reopen without it was slow', () => {
  const slow = { no_host: at(FIRST_AUDIO_SLOW_MS + 1, 1), host: null };
  const edge = { no_host: at(FIRST_AUDIO_SLOW_MS, 1), host: null };
  const fast = { no_host: at(45, 1), host: null };
  const cases: [string, Parameters<typeof firstWordsNeedHost>[0], boolean, number | null][] = [
    ['nothing known', null, false, null],
    ['nothing measured without the host', { no_host: null, host: at(2000, 1) }, false, null],
    ['slow, no host', slow, false, FIRST_AUDIO_SLOW_MS + 1],
    ['slow, host connected: its waker wakes the sink', slow, true, null],
    ['at the mark is not slow', edge, false, null],
    ['fast, no host', fast, false, null],
    [
      'a slow getUserMedia, then audio at once: not what the host fixes',
      { no_host: at(400, 1, 380), host: null },
      false,
      null,
    ],
    [
      'a quick open, then a long wait: named by its whole time',
      { no_host: at(900, 1, 40), host: null },
      false,
      900,
    ],
  ];
  for (const [name, entry, host, want] of cases) assert.equal(firstWordsNeedHost(entry, host), want, name);
  // Slow, then a fast open without the host (e.g. the user moved to PipeWire): released again.
  assert.equal(firstWordsNeedHost(learnFirstAudio(slow, at(40, 2), false), false), null);
});

test('the note names the figure and the fix', () => {
  const note = firstWordsNote(952.4);
  assert.match(note, /^First words on this microphone need micoff-host: its reopen took 952 ms\./);
  assert.match(note, /Install micoff-host \(see README\)/);
});

test('a reopen slower than the key gives: kept after two in a row, only where the user unmutes by key', () => {
  assert.ok(SLOW_REOPEN_WAIT_MS < KEY_LEAD_MS);
  const slow = at(128, 1, 45); // PipeWire monitor behind a large-latency player: waited 83 ms once open
  const fast = at(78, 1, 67); // PulseAudio monitor: waited 11 ms
  const loadedOpen = at(243, 1, 243); // a slow open on a loaded machine, the device itself at once
  const own = at(400, 1, 0); // the page's own getUserMedia: not a reopen
  let streak = 0;
  const seen: [number, number | null][] = [];
  for (const s of [slow, own, fast, slow, slow, slow, loadedOpen, slow]) {
    streak = slowReopenStreak(streak, s);
    seen.push([streak, reopenOutlastsKey(streak, s, true)]);
  }
  assert.deepEqual(seen, [
    [1, null],
    [1, null],
    [0, null],
    [1, null],
    [2, 128],
    [3, 128],
    [0, null],
    [1, null],
  ]);
  assert.equal(reopenOutlastsKey(2, slow, false), null, 'unmuted by click only: released');
  assert.equal(reopenOutlastsKey(5, null, true), null, 'nothing measured');
  assert.equal(slowReopenStreak(1, at(60 + SLOW_REOPEN_WAIT_MS, 1, 60)), 0, 'just at the mark is not slow');
});
