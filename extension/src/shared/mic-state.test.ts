import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NativeReleaseVerdict, TabReleaseView } from './messages/popup-background.ts';
import { badgeOf, MIC_BADGE, micClosed, micStateOf } from './mic-state.ts';

const view = (v: Partial<TabReleaseView>): TabReleaseView => ({
  origin: null,
  state: 'capturing',
  since_ms: 1,
  reason: null,
  ...v,
});
const firefox = (now: NativeReleaseVerdict) =>
  view({ muted: true, native_release: { now, last: null, delay_ms: 3000, margin_ms: 2000, command: 'c' } });

test('micStateOf: the microphone, with Firefox’s own release counted as a release', () => {
  assert.equal(micStateOf(view({})), 'on');
  assert.equal(micStateOf(view({ muted: true })), 'muted_open');
  assert.equal(micStateOf(view({ state: 'released', muted: true })), 'released');
  assert.equal(micStateOf(view({ state: 'not_released', muted: true })), 'kept');
  assert.equal(micStateOf(firefox({ state: 'in_effect', after_ms: 0, late: false })), 'released_by_firefox');
  assert.equal(
    micStateOf(firefox({ state: 'in_effect', after_ms: 9000, late: true })),
    'released_by_firefox',
  );
  for (const now of [
    { state: 'pending', deadline_ms: 1 },
    { state: 'not_in_effect', open_ms: 1 },
    { state: 'unknown', why: 'w' },
  ] as const) {
    assert.equal(micStateOf(firefox(now)), 'muted_open', now.state);
  }
});

test('badgeOf names the microphone, not micoff: MIC while open, none once closed, the title in words', () => {
  assert.equal(badgeOf(null).text, '');
  assert.equal(badgeOf(view({})).text, 'MIC');
  assert.equal(badgeOf(view({ muted: true })).text, 'MIC');
  assert.notEqual(badgeOf(view({ muted: true })).color, badgeOf(view({})).color);
  assert.equal(badgeOf(view({ state: 'released' })).text, '');
  assert.equal(badgeOf(firefox({ state: 'in_effect', after_ms: 0, late: false })).text, '');
  assert.match(badgeOf(view({ state: 'not_released', reason: 'why' })).title, /kept open \(why\)$/);
  for (const b of Object.values(MIC_BADGE)) {
    assert.match(b.title, /^micoff: .*microphone/);
    assert.doesNotMatch(b.text, /^(ON|OFF)$/);
  }
});

test('micClosed: released by micoff or by Firefox is closed; on, muted-open and kept are not', () => {
  assert.deepEqual(
    (['on', 'muted_open', 'released', 'released_by_firefox', 'kept'] as const).map(micClosed),
    [false, false, true, true, false],
  );
});
