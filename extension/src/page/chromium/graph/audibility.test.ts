import assert from 'node:assert/strict';
import { test } from 'node:test';
import { KEPT } from '../../../shared/release-decision.ts';
import { type Audibility, assess, plainAudibility, starvedSenders, type Vertex } from './audibility.ts';

// Builders for graph vertices (a track's `next` is fixed here; in the page it is read live).
const track = (
  enabled: boolean,
  next: Vertex[] = [],
  o: { seen?: boolean; unseen?: string; clones?: Vertex[] } = {},
): Vertex => ({
  kind: 'track',
  key: {},
  enabled,
  seen: o.seen ?? next.length > 0,
  unseen: o.unseen ?? KEPT.clone,
  next: () => next,
  clones: () => o.clones ?? [],
});
const node = (next: Vertex[] = [], reads: string | null = null): Vertex => ({
  kind: 'node',
  key: {},
  reads,
  next: () => next,
});
const sender = (sending: boolean): Vertex => ({ kind: 'sender', sending, why: KEPT.sending });
const sink = (why: string): Vertex => ({ kind: 'sink', why });
/** A WebAudio destination node leading to its own (derived) track. */
const destination = (enabled: boolean, next: Vertex[]) =>
  node([track(enabled, next, { unseen: KEPT.unseen })]);

const SILENT: Audibility = { hears: null, silenced: true };
const NEITHER: Audibility = { hears: null, silenced: false };
const hears = (why: string, silenced = false): Audibility => ({ hears: why, silenced });

test('assess: what hears a device, what silences it (table)', () => {
  const cases: [name: string, roots: Vertex[], want: Audibility][] = [
    ['disabled mic (the plain rule)', [track(false, [sender(true)])], SILENT],
    ['enabled mic nobody was seen using', [track(true)], hears(KEPT.clone)],
    ['enabled mic on a sending sender', [track(true, [sender(true)])], hears(KEPT.sending)],
    ['enabled mic on an inactive transceiver / active:false', [track(true, [sender(false)])], SILENT],
    ['enabled mic taken off its sender (replaceTrack(null))', [track(true, [], { seen: true })], SILENT],
    [
      'noise-suppression graph, destination track disabled',
      [track(true, [node([node([destination(false, [sender(true)])])])])],
      SILENT,
    ],
    [
      'noise-suppression graph, destination track enabled and sent',
      [track(true, [node([node([destination(true, [sender(true)])])])])],
      hears(KEPT.sending),
    ],
    [
      'graph to a destination whose track goes nowhere we saw',
      [track(true, [node([destination(true, [])])])],
      hears(KEPT.unseen),
    ],
    [
      'graph: destination disabled, but an analyser on the raw mic',
      [track(true, [node([destination(false, [sender(true)]), node([], KEPT.analyser)])])],
      hears(KEPT.analyser, true),
    ],
    [
      'worklet with its port in use on the raw mic',
      [track(true, [node([], KEPT.worklet)])],
      hears(KEPT.worklet),
    ],
    [
      'mic muted at the sender, a worklet reads it',
      [track(true, [sender(false), node([], KEPT.worklet)])],
      hears(KEPT.worklet, true),
    ],
    ['source node not connected yet', [track(true, [node([])])], NEITHER],
    ['graph to the speakers', [track(true, [node([sink(KEPT.speakers)])])], hears(KEPT.speakers)],
    ['media element playing the mic', [track(true, [sink(KEPT.element)])], hears(KEPT.element)],
    ['disabled mic + enabled clone (talk-while-muted)', [track(false), track(true)], hears(KEPT.clone, true)],
    ['disabled mic + disabled clone', [track(false), track(false)], SILENT],
    [
      'enabled mic, sender inactive, plus a sending one',
      [track(true, [sender(false), sender(true)])],
      hears(KEPT.sending, true),
    ],
    [
      'disabled track stops the walk (its analyser hears silence)',
      [track(false, [node([], KEPT.analyser)])],
      SILENT,
    ],
    [
      'a disabled derived track whose enabled clone is sent',
      [track(true, [node([track(false, [], { clones: [track(true, [sender(true)])] })])])],
      hears(KEPT.sending, true),
    ],
    // Insertable streams (patch/insertable/index.ts): a processor passes the path on to the generators its
    // frames were followed to; one followed nowhere hears, and the page's other generators are walked
    // after it, for the report.
    [
      'processor -> worker -> generator, the generator track disabled',
      [track(true, [node([track(false, [sender(true)], { unseen: KEPT.unseen })])])],
      SILENT,
    ],
    [
      'processor -> generator on an inactive sender',
      [track(true, [node([track(true, [sender(false)], { unseen: KEPT.unseen })])])],
      SILENT,
    ],
    [
      'processor read by page code, its output generator disabled',
      [track(true, [node([sink(KEPT.processor), track(false, [sender(true)], { unseen: KEPT.unseen })])])],
      hears(KEPT.processor, true),
    ],
    [
      'processor read by page code, unmuted',
      [track(true, [node([sink(KEPT.processor), track(true, [sender(true)], { unseen: KEPT.unseen })])])],
      hears(KEPT.processor),
    ],
    ['no tracks', [], NEITHER],
  ];
  for (const [name, roots, want] of cases) assert.deepEqual(assess(roots), want, name);
});

test('assess: a cycle in a WebAudio graph (a feedback delay) ends', () => {
  const loopKey = {};
  const loop: Vertex = {
    kind: 'node',
    key: loopKey,
    reads: null,
    next: () => [loop, destination(false, [])],
  };
  assert.deepEqual(assess([track(true, [loop])]), SILENT);
});

test('assess: with the pipeline/sender rules off only the plain rule applies', () => {
  const cases: [name: string, roots: Vertex[], want: Audibility][] = [
    ['enabled mic on an inactive sender', [track(true, [sender(false)])], hears(KEPT.clone)],
    [
      'enabled mic into a disabled destination',
      [track(true, [node([destination(false, [])])])],
      hears(KEPT.clone),
    ],
    ['disabled mic', [track(false, [sender(true)])], SILENT],
    ['disabled mic + enabled clone', [track(false), track(true)], hears(KEPT.clone, true)],
  ];
  for (const [name, roots, want] of cases) assert.deepEqual(assess(roots, false), want, name);
});

test('plainAudibility: enabled live members hear, disabled ones are silenced, ended ones count for nothing', () => {
  const cases: [members: { enabled: boolean; ended: boolean }[], want: Audibility][] = [
    [[{ enabled: true, ended: false }], hears('x')],
    [[{ enabled: false, ended: false }], SILENT],
    [
      [
        { enabled: false, ended: false },
        { enabled: true, ended: false },
      ],
      hears('x', true),
    ],
    [[{ enabled: true, ended: true }], NEITHER],
  ];
  for (const [members, want] of cases)
    assert.deepEqual(plainAudibility(members, 'x'), want, JSON.stringify(members));
});

test('starvedSenders: the senders a release leaves without frames (table)', () => {
  // Each sender vertex restarts under its own name; the walk returns what it would restart.
  const named = (name: string, sending = true): Vertex => ({
    kind: 'sender',
    sending,
    why: KEPT.sending,
    restart: Object.assign(async () => {}, { label: name }),
  });
  /** An insertable-streams processor: its frames go to `to` only while frames come in. */
  const relay = (to: Vertex[], extra: Vertex[] = []): Vertex => ({
    kind: 'node',
    key: {},
    reads: null,
    next: () => [...to, ...extra],
    relayed: () => to,
  });
  const gen = (enabled: boolean, next: Vertex[]) => track(enabled, next, { unseen: KEPT.unseen });
  const cases: [name: string, roots: Vertex[], want: string[]][] = [
    ['a disabled mic on its sender (the plain mute)', [track(false, [named('a')])], ['a']],
    ['an enabled mic on its sender', [track(true, [named('a')])], ['a']],
    ['a sender that sends nothing anyway (inactive, active: false)', [track(false, [named('a', false)])], []],
    ['a sender without a restart (not one micoff can restart)', [track(false, [sender(true)])], []],
    [
      'two senders on one track, a clone on a third',
      [track(false, [named('a'), named('b')]), track(false, [named('c')])],
      ['a', 'b', 'c'],
    ],
    [
      'processor -> worker -> generator -> sender (the generator disabled)',
      [track(true, [relay([gen(false, [named('g')])])])],
      ['g'],
    ],
    [
      'a clone of the generator on a second sender',
      [
        track(true, [
          relay([track(false, [named('g')], { unseen: KEPT.unseen, clones: [gen(true, [named('h')])] })]),
        ]),
      ],
      ['h', 'g'],
    ],
    [
      'a WebAudio graph keeps rendering: its destination track is not starved',
      [track(false, [node([destination(false, [named('w')])])])],
      [],
    ],
    [
      'a processor whose frames go to page code (no relay)',
      [track(true, [node([sink(KEPT.processor), gen(false, [named('p')])])])],
      [],
    ],
    [
      'a media element, an analyser: no sender',
      [track(false, [sink(KEPT.element), node([], KEPT.analyser)])],
      [],
    ],
    ['no tracks', [], []],
  ];
  for (const [name, roots, want] of cases) {
    const got = starvedSenders(roots).map((r) => (r as unknown as { label: string }).label);
    assert.deepEqual(got, want, name);
  }
});

test('starvedSenders: a generator reached twice, a relay cycle, each visited once', () => {
  let g: Vertex;
  const restart = Object.assign(async () => {}, { label: 'g' });
  const loop: Vertex = {
    kind: 'node',
    key: {},
    reads: null,
    next: () => [g],
    relayed: () => [g, loop],
  };
  g = track(true, [{ kind: 'sender', sending: true, why: KEPT.sending, restart }, loop], {
    unseen: KEPT.unseen,
  });
  assert.deepEqual(starvedSenders([track(true, [loop]), track(false, [loop])]), [restart]);
});
