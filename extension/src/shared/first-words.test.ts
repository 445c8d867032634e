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
  SLOW_REOPEN_MS,
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

test('a reopen slower than the key gives: kept only where the user unmutes by key, only for micoff’s reopens', () => {
  assert.ok(SLOW_REOPEN_MS > KEY_LEAD_MS);
  type Case = [what: string, sample: ReturnType<typeof at> | null, byKey: boolean, kept: number | null];
  const cases: Case[] = [
    ['PipeWire monitor behind a large-latency player, by key', at(180, 1, 90), true, 180],
    ['the same device, unmuted by click only', at(180, 1, 90), false, null],
    ['a device that keeps up (PulseAudio monitor)', at(60, 1, 30), true, null],
    ['just at the mark', at(SLOW_REOPEN_MS, 1, 60), true, null],
    ['the page’s own getUserMedia (not a reopen)', at(400, 1, 0), true, null],
    ['nothing measured yet', null, true, null],
  ];
  for (const [what, sample, byKey, kept] of cases) assert.equal(reopenOutlastsKey(sample, byKey), kept, what);
});
