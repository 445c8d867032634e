import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { NativeReleaseVerdict, TabReleaseView } from '../shared/messages/popup-background.ts';
import { phaseOf, startCallPhase } from './call-phase.ts';
import { fakeDeps, tick, VERSION } from './fakes.test-util.ts';
import { createHostClient } from './host-client.ts';
import { createTabViews } from './popup-tab-views.ts';

const view = (state: TabReleaseView['state'], muted = false): TabReleaseView => ({
  origin: null,
  state,
  since_ms: 0,
  reason: null,
  muted,
});

test('the phase of all tabs: an unmuted capture wins, released only when every device is', () => {
  assert.equal(phaseOf([]), 'idle');
  assert.equal(phaseOf([view('released', true), view('capturing')]), 'capturing');
  assert.equal(phaseOf([view('released', true), view('capturing', true)]), 'muted');
  assert.equal(phaseOf([view('released', true), view('not_released', true)]), 'kept');
  assert.equal(phaseOf([view('released', true)]), 'released');
});

test('Firefox: a muted tab whose microphone Firefox released is released (the chart shades it)', () => {
  const firefox = (now: NativeReleaseVerdict): TabReleaseView => ({
    ...view('capturing', true),
    native_release: { now, last: null, delay_ms: 3000, margin_ms: 2000, command: 'c' },
  });
  assert.equal(phaseOf([firefox({ state: 'in_effect', after_ms: 0, late: false })]), 'released');
  assert.equal(phaseOf([firefox({ state: 'pending', deadline_ms: 1 })]), 'muted');
  assert.equal(phaseOf([firefox({ state: 'not_in_effect', open_ms: 6000 })]), 'muted');
  assert.equal(
    phaseOf([firefox({ state: 'in_effect', after_ms: 0, late: false }), view('capturing')]),
    'capturing',
  );
});

/** A connected host client whose audio subscription is answered, and the call phase over it. */
async function setup() {
  const f = fakeDeps();
  const host = createHostClient(f.deps);
  const tabs = createTabViews();
  const savedFromHost: number[] = [];
  let gone = 0;
  const saved = { fromHost: (v: number) => savedFromHost.push(v), hostGone: () => gone++ };
  const phase = startCallPhase({ host, tabs, saved });
  host.start();
  const port = f.ports[0];
  assert.ok(port);
  port.answer(VERSION, 1);
  await tick();
  return { f, port, host, tabs, phase, savedFromHost, gone: () => gone };
}

test('the host is told each change of phase (events, not ticks) and what it saved comes back', async () => {
  const { port, tabs, phase, savedFromHost } = await setup();
  assert.equal(port.sent.length, 1); // only the handshake: a new host is idle like the tabs
  tabs.set(4, view('capturing'));
  assert.deepEqual(port.last(), { type: 'phase', phase: 'capturing', id: 2 });
  port.answer({ saved_cpu_s: 0 });
  tabs.set(4, view('capturing')); // the same phase: nothing sent
  tabs.set(5, view('released', true)); // tab 4 still captures unmuted
  assert.equal(port.sent.length, 2);
  tabs.set(4, view('capturing', true));
  assert.deepEqual(port.last(), { type: 'phase', phase: 'muted', id: 3 });
  tabs.set(4, view('released', true));
  assert.deepEqual(port.last(), { type: 'phase', phase: 'released', id: 4 });
  port.answer({ saved_cpu_s: 0 });
  tabs.set(4, view('capturing'));
  port.answer({ saved_cpu_s: 1.5 });
  await tick();
  assert.deepEqual(savedFromHost, [0, 0, 1.5]);
  assert.equal(phase.current(), 'capturing');
});

test('a host that reconnects is told the phase again; the one that left hands over what it saved', async () => {
  const { f, port, tabs, gone } = await setup();
  tabs.set(4, view('released', true));
  assert.equal(port.last().phase, 'released');
  port.close();
  assert.equal(gone(), 1);
  tabs.set(4, view('capturing')); // while disconnected: nothing to tell
  f.timers.advance(1000);
  const next = f.ports[1];
  assert.ok(next);
  next.answer(VERSION, next.last().id);
  await tick();
  assert.deepEqual(next.last(), { type: 'phase', phase: 'capturing', id: next.last().id });
  assert.equal(gone(), 1);
});
