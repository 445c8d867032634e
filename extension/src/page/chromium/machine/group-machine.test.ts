import assert from 'node:assert/strict';
import { test } from 'node:test';
import { FakeTimers, tick } from '../../../background/fakes.test-util.ts';
import { ENDED, KEPT } from '../../../shared/release-decision.ts';
import type { PolicyAnswer, ReleaseConfig } from '../../common/bridge.ts';
import type { Audibility } from '../graph/audibility.ts';
import type { GroupMachine, MachineGroup, Reopened } from './group-machine.ts';
import {
  createGroupMachine,
  freshMachineState,
  groupState,
  machineRelay,
  RESTART_GIVE_UP_MS,
  RESTART_RETRY_MS,
} from './group-machine.ts';

interface M {
  enabled: boolean;
  ended: boolean;
}
interface G extends MachineGroup {
  members: Set<M>;
}

const RECORDING = KEPT.recording;

/** One group with one enabled track, the machine over fake effects, and what the effects saw. */
function setup(
  opts: {
    lastOnAgo?: number;
    heard?: () => Audibility;
    onHeard?: () => void;
    present?: () => Promise<boolean>;
  } = {},
) {
  const timers = new FakeTimers();
  const track: M = { enabled: true, ended: false };
  const g: G = {
    label: 'Mic',
    members: new Set([track]),
    ...freshMachineState(timers.now - (opts.lastOnAgo ?? 0)),
  };
  const world = {
    config: { delay_ms: 3000, release: true, reason: null } as ReleaseConfig,
    hold: null as string | null,
    slow: null as string | null,
    log: [] as string[],
    questions: [] as ((a: PolicyAnswer) => void)[],
    reopens: [] as { resolve: (r: Reopened) => void; reject: (e: Error) => void }[],
  };
  const machine = createGroupMachine<G>({
    now: () => timers.now,
    setTimer: (cb, ms) => timers.setTimeout(cb, ms),
    clearTimer: (h) => timers.clearTimeout(h),
    config: () => world.config,
    holdReason: () => world.hold,
    slowReopen: () => world.slow,
    askPolicy: () => {
      world.log.push('ask');
      return new Promise((resolve) => world.questions.push(resolve));
    },
    stopTracks: () => world.log.push('stop'),
    reacquire: () => {
      world.log.push('reacquire');
      return new Promise((resolve, reject) => world.reopens.push({ resolve, reject }));
    },
    endTracks: (x) => {
      world.log.push('end');
      for (const m of x.members) m.ended = true;
    },
    changed: () => {},
    audibility: opts.heard,
    heard: opts.onHeard,
    ...(opts.present ? { present: opts.present } : {}),
  });
  const set = (m: M, enabled: boolean) => {
    m.enabled = enabled;
    machine.evaluate(g);
  };
  /** Answer the oldest policy question and let the machine act on it. */
  const answer = async (a: PolicyAnswer) => {
    const q = world.questions.shift();
    assert.ok(q, 'a policy question is pending');
    q(a);
    await tick();
  };
  const reopen = async (ok: boolean | Error) => {
    const r = world.reopens.shift();
    assert.ok(r, 'a reacquire is pending');
    if (ok instanceof Error) r.reject(ok);
    else r.resolve(ok ? { ok: true } : { ok: false, why: ENDED.gone });
    await tick();
  };
  /** Mute (and wait out the delay), allow, and check the device is released. */
  const release = async () => {
    set(track, false);
    timers.advance(world.config.delay_ms);
    await answer({ allow: true, reason: null });
    assert.equal(groupState(g), 'released');
  };
  machine.evaluate(g);
  return { timers, track, g, world, machine, set, answer, reopen, release };
}

test('mute: released after the delay, once the background allows', async () => {
  const { timers, track, g, world, set, answer } = setup();
  set(track, false);
  assert.equal(timers.pending(), 1);
  timers.advance(2999);
  assert.deepEqual(world.log, []);
  assert.equal(groupState(g), 'capturing');
  timers.advance(1);
  assert.deepEqual(world.log, ['ask']);
  await answer({ allow: true, reason: null });
  assert.deepEqual(world.log, ['ask', 'stop']);
  assert.equal(g.state, 'off');
  assert.equal(groupState(g), 'released');
});

test('a device on for longer than the delay is released at once (Firefox rule)', async () => {
  const { timers, track, world, set } = setup({ lastOnAgo: 60_000 });
  set(track, false);
  timers.advance(0);
  assert.deepEqual(world.log, ['ask']);
});

test('enable during a pending release cancels it', async () => {
  const { timers, track, g, world, set } = setup();
  set(track, false);
  timers.advance(1000);
  set(track, true);
  assert.equal(timers.pending(), 0);
  timers.advance(10_000);
  assert.deepEqual(world.log, []);
  assert.equal(groupState(g), 'capturing');
});

test('enable while the policy question is in flight: the answer is ignored', async () => {
  const { timers, track, g, world, set, answer } = setup();
  set(track, false);
  timers.advance(3000);
  set(track, true);
  await answer({ allow: true, reason: null });
  assert.deepEqual(world.log, ['ask']);
  assert.equal(g.state, 'on');
});

test('policy says no: kept open with its reason, and not asked again until something changes', async () => {
  const { timers, track, g, world, set, answer, machine } = setup();
  set(track, false);
  timers.advance(3000);
  await answer({ allow: false, reason: 'Bluetooth headset' });
  assert.equal(groupState(g), 'not_released');
  assert.equal(g.kept, 'Bluetooth headset');
  machine.evaluate(g); // e.g. another disabled track reported
  timers.advance(10_000);
  assert.deepEqual(world.log, ['ask']);
  set(track, true); // unmute clears the reason; the next mute asks again
  assert.equal(g.kept, null);
  set(track, false);
  timers.advance(3000);
  assert.deepEqual(world.log, ['ask', 'ask']);
  await answer({ allow: false, reason: null });
  assert.equal(g.kept, KEPT.policy);
});

test('a reopen slower than the key: kept open once the background allows; its own reason first', async () => {
  const { timers, track, g, world, set, answer } = setup();
  world.slow = KEPT.slowReopen;
  set(track, false);
  timers.advance(3000);
  await answer({ allow: false, reason: KEPT.firstWords });
  assert.equal(g.kept, KEPT.firstWords, 'what the host would fix is what the user reads');
  set(track, true);
  set(track, false);
  timers.advance(3000);
  await answer({ allow: true, reason: null });
  assert.deepEqual(world.log, ['ask', 'ask'], 'never stopped');
  assert.equal(groupState(g), 'not_released');
  assert.equal(g.kept, KEPT.slowReopen);
  set(track, true);
  world.slow = null; // e.g. the page reloaded its call and nothing is known of a reopen
  set(track, false);
  timers.advance(3000);
  await answer({ allow: true, reason: null });
  assert.equal(groupState(g), 'released');
});

test('release off for the site: kept at once without a timer; a new config reconsiders', async () => {
  const { timers, track, g, world, set, machine, answer } = setup();
  world.config = { delay_ms: 3000, release: false, reason: KEPT.site };
  set(track, false);
  assert.equal(timers.pending(), 0);
  assert.equal(groupState(g), 'not_released');
  assert.equal(g.kept, KEPT.site);
  world.config = { delay_ms: 500, release: true, reason: null };
  machine.reconsider(g);
  assert.equal(groupState(g), 'capturing');
  timers.advance(500);
  await answer({ allow: true, reason: null });
  assert.equal(groupState(g), 'released');
});

test('a recorder holding the device keeps it open until it stops', async () => {
  const { timers, track, g, world, set, machine, answer } = setup();
  world.hold = RECORDING;
  set(track, false);
  timers.advance(3000);
  assert.deepEqual(world.log, []); // not even asked
  assert.equal(g.kept, RECORDING);
  assert.equal(groupState(g), 'not_released');
  machine.unhold(g, 'something else'); // another hold's end does not clear this one
  assert.equal(g.kept, RECORDING);
  world.hold = null;
  machine.unhold(g, RECORDING); // the recorder stopped
  assert.equal(g.kept, null);
  timers.advance(0); // on for longer than the delay by now
  await answer({ allow: true, reason: null });
  assert.equal(groupState(g), 'released');
});

test('a recorder that starts while the release waits for its delay keeps the device', async () => {
  const { timers, track, g, world, set } = setup();
  set(track, false);
  timers.advance(1000);
  world.hold = RECORDING;
  timers.advance(2000);
  assert.deepEqual(world.log, []);
  assert.equal(g.kept, RECORDING);
});

test('unmute while released: reacquire, then capturing; the delay counts from the reopen', async () => {
  const { timers, track, g, world, set, reopen, answer } = setup({ lastOnAgo: 60_000 });
  set(track, false);
  timers.advance(0);
  await answer({ allow: true, reason: null });
  timers.advance(5000);
  set(track, true);
  assert.equal(g.state, 'acquiring');
  assert.equal(groupState(g), 'capturing');
  await reopen(true);
  assert.equal(g.state, 'on');
  assert.equal(g.lastOnMs, timers.now);
  set(track, false); // muted right after: the full delay again
  timers.advance(2999);
  assert.deepEqual(world.log, ['ask', 'stop', 'reacquire']);
  timers.advance(1);
  assert.deepEqual(world.log, ['ask', 'stop', 'reacquire', 'ask']);
});

test('muted again while reacquiring: on once reopened, then released after the delay', async () => {
  const { timers, track, g, world, set, reopen, release, answer } = setup();
  await release();
  set(track, true);
  set(track, false); // still acquiring: nothing to release yet
  assert.equal(timers.pending(), 0);
  await reopen(true);
  assert.equal(g.state, 'on');
  assert.equal(timers.pending(), 1);
  timers.advance(3000);
  await answer({ allow: true, reason: null });
  assert.deepEqual(world.log, ['ask', 'stop', 'reacquire', 'ask', 'stop']);
});

test('failure on reacquire ends the tracks (as on unplug)', async () => {
  for (const outcome of [false, new Error('bookkeeping failed')]) {
    const { track, g, world, set, reopen, release } = setup();
    await release();
    set(track, true);
    await reopen(outcome);
    assert.deepEqual(world.log, ['ask', 'stop', 'reacquire', 'end']);
    assert.equal(track.ended, true);
    assert.equal(g.state, 'off');
    assert.equal(groupState(g), 'ended');
  }
});

test('the reason a reopen failed is kept for the report', async () => {
  const { track, g, set, release, world } = setup();
  await release();
  set(track, true);
  const r = world.reopens.shift();
  r?.resolve({ ok: false, why: ENDED.permission });
  await tick();
  assert.equal(g.endedWhy, ENDED.permission);
  assert.equal(groupState(g), 'ended');
});

test('prime: reopened while still muted, kept on for the hold (not the delay), then released again', async () => {
  const { timers, g, world, machine, reopen, answer, release } = setup();
  await release();
  assert.equal(machine.prime(g, 5000, KEPT.primed), true);
  assert.equal(g.state, 'acquiring');
  assert.equal(groupState(g), 'not_released', 'reported as kept open, with why');
  await reopen(true);
  assert.equal(g.state, 'on');
  assert.deepEqual(world.log, ['ask', 'stop', 'reacquire']);
  timers.advance(4999);
  assert.deepEqual(world.log, ['ask', 'stop', 'reacquire'], 'held past the 3 s delay');
  timers.advance(1);
  await answer({ allow: true, reason: null });
  assert.deepEqual(world.log, ['ask', 'stop', 'reacquire', 'ask', 'stop']);
  assert.equal(groupState(g), 'released');
  assert.equal(g.hold, null);
});

test('prime: a short hold (a keepalive) lets the device go before the delay would', async () => {
  const { timers, g, world, machine, reopen, answer, release } = setup();
  await release();
  machine.prime(g, 300, KEPT.keepalive);
  await reopen(true);
  timers.advance(300);
  await answer({ allow: true, reason: null });
  assert.deepEqual(world.log, ['ask', 'stop', 'reacquire', 'ask', 'stop']);
});

test('prime: the unmute during the hold finds the device on (nothing to reopen) and ends the hold', async () => {
  const { timers, track, g, world, machine, reopen, set, release } = setup();
  await release();
  machine.prime(g, 5000, KEPT.primed);
  await reopen(true);
  set(track, true);
  assert.equal(g.hold, null);
  assert.equal(timers.pending(), 0);
  assert.equal(groupState(g), 'capturing');
  assert.deepEqual(world.log, ['ask', 'stop', 'reacquire']);
});

test('prime: only a released device; not while capturing, reopening or kept', async () => {
  const { track, g, machine, set, release } = setup();
  assert.equal(machine.prime(g, 5000, KEPT.primed), false, 'capturing');
  set(track, false);
  assert.equal(machine.prime(g, 5000, KEPT.primed), false, 'muted, release pending');
  await release();
  set(track, true);
  assert.equal(machine.prime(g, 5000, KEPT.primed), false, 'reopening for the unmute');
});

test('heard: called when a muted device is heard again, not on other decisions', async () => {
  let heard = 0;
  const { track, set, timers, release, reopen } = setup({ onHeard: () => heard++ });
  set(track, true);
  assert.equal(heard, 0);
  set(track, false);
  set(track, true);
  assert.equal(heard, 1, 'unmuted within the delay');
  await release();
  timers.advance(1000);
  set(track, true);
  assert.equal(heard, 2, 'unmuted while released');
  await reopen(true);
  assert.equal(heard, 2);
});

test('stop while released: the group ends without reopening the device', async () => {
  const { track, g, world, machine, release } = setup();
  await release();
  track.ended = true; // the page's stop()
  machine.evaluate(g);
  assert.deepEqual(world.log, ['ask', 'stop']);
  assert.equal(groupState(g), 'ended');
});

test('stop during a pending release cancels it', async () => {
  const { timers, track, g, world, set, machine } = setup();
  set(track, false);
  track.ended = true;
  machine.evaluate(g);
  assert.equal(timers.pending(), 0);
  timers.advance(10_000);
  assert.deepEqual(world.log, []);
  assert.equal(groupState(g), 'ended');
});

test('clone made while released: a disabled clone keeps it released, an enabled one reopens it', async () => {
  const { g, world, machine, reopen, release } = setup();
  await release();
  const clone: M = { enabled: false, ended: false };
  g.members.add(clone);
  machine.evaluate(g);
  assert.equal(groupState(g), 'released');
  clone.enabled = true;
  machine.evaluate(g);
  assert.equal(g.state, 'acquiring');
  await reopen(true);
  // The original is still muted and the clone hears: the page listens while muted.
  assert.equal(groupState(g), 'not_released');
  assert.equal(g.listening, KEPT.clone);
  assert.deepEqual(world.log, ['ask', 'stop', 'reacquire']);
});

test('an enabled clone keeps the device on; stopping it lets the muted original go', async () => {
  const { timers, track, g, world, set, machine, answer } = setup();
  const clone: M = { enabled: true, ended: false };
  g.members.add(clone);
  set(track, false);
  timers.advance(10_000);
  assert.deepEqual(world.log, []);
  clone.ended = true;
  machine.evaluate(g);
  timers.advance(3000);
  await answer({ allow: true, reason: null });
  assert.equal(groupState(g), 'released');
});

test('audibility: an enabled track nothing hears is released, and reacquired when a path hears again', async () => {
  let heard: Audibility = { hears: KEPT.sending, silenced: false };
  const { timers, g, world, machine, answer, reopen } = setup({ heard: () => heard, lastOnAgo: 10_000 });
  machine.evaluate(g);
  assert.equal(groupState(g), 'capturing');
  heard = { hears: null, silenced: true }; // e.g. the transceiver went inactive
  machine.evaluate(g);
  timers.advance(0);
  await answer({ allow: true, reason: null });
  assert.equal(groupState(g), 'released');
  heard = { hears: KEPT.sending, silenced: false }; // direction back to sending
  machine.evaluate(g);
  assert.equal(g.state, 'acquiring');
  await reopen(true);
  assert.equal(groupState(g), 'capturing');
  assert.deepEqual(world.log, ['ask', 'stop', 'reacquire']);
});

test('audibility: a listener while muted keeps the device open, with its reason; nothing muted keeps none', () => {
  const cases: [heard: Audibility, state: string, reason: string | null][] = [
    [{ hears: KEPT.analyser, silenced: true }, 'not_released', KEPT.analyser],
    [{ hears: KEPT.worklet, silenced: true }, 'not_released', KEPT.worklet],
    [{ hears: KEPT.sending, silenced: false }, 'capturing', null],
    [{ hears: null, silenced: false }, 'capturing', null], // a node not connected yet: no mute seen
  ];
  for (const [heard, state, reason] of cases) {
    const { timers, g, world, machine } = setup({ heard: () => heard, lastOnAgo: 10_000 });
    machine.evaluate(g);
    timers.advance(10_000);
    assert.equal(groupState(g), state, JSON.stringify(heard));
    assert.equal(g.listening, reason);
    assert.deepEqual(world.log, [], 'never asked to release');
  }
});

test('audibility: the listener going away lets the muted device go', async () => {
  let heard: Audibility = { hears: KEPT.analyser, silenced: true };
  const { timers, g, machine, answer } = setup({ heard: () => heard, lastOnAgo: 10_000 });
  machine.evaluate(g);
  assert.equal(groupState(g), 'not_released');
  heard = { hears: null, silenced: true };
  machine.evaluate(g);
  timers.advance(0);
  await answer({ allow: true, reason: null });
  assert.equal(groupState(g), 'released');
  assert.equal(g.listening, null);
});

test('restart: a device that is on is stopped and reopened at once, the page still unmuted', async () => {
  const { g, world, machine, reopen } = setup();
  assert.equal(machine.restart(g), true);
  assert.deepEqual(world.log, ['stop', 'reacquire']);
  assert.equal(g.state, 'acquiring');
  assert.equal(groupState(g), 'capturing');
  await reopen(true);
  assert.equal(g.state, 'on');
  assert.equal(groupState(g), 'capturing');
});

test('restart: a release pending before it is void; the reopened device is released after its own delay', async () => {
  const { timers, track, g, world, machine, set, reopen, answer } = setup({ lastOnAgo: 60_000 });
  // Muted with the release due, then the watch restarts it (its real track stalled).
  set(track, false);
  machine.restart(g);
  timers.advance(3000);
  assert.deepEqual(world.log, ['stop', 'reacquire'], 'the old timer does not fire a release mid-reopen');
  await reopen(true);
  timers.advance(2999);
  assert.deepEqual(world.log, ['stop', 'reacquire']);
  timers.advance(1);
  await answer({ allow: true, reason: null });
  assert.deepEqual(world.log, ['stop', 'reacquire', 'ask', 'stop']);
  assert.equal(groupState(g), 'released');
});

test('restart: a refused reopen is tried again every RESTART_RETRY_MS, the tracks live; it ends them after RESTART_GIVE_UP_MS', async () => {
  const { timers, track, g, world, machine, reopen } = setup();
  machine.restart(g);
  await reopen(false);
  assert.deepEqual([g.state, track.ended, groupState(g)], ['acquiring', false, 'capturing']);
  timers.advance(RESTART_RETRY_MS - 1);
  assert.deepEqual(world.log, ['stop', 'reacquire']);
  timers.advance(1);
  await tick();
  assert.deepEqual(world.log, ['stop', 'reacquire', 'reacquire'], 'tried again');
  await reopen(true);
  assert.deepEqual([g.state, track.ended], ['on', false]);
  // Refused for good: ended once RESTART_GIVE_UP_MS have passed since the restart.
  machine.restart(g);
  const tries = () => world.log.filter((x) => x === 'reacquire').length;
  const before = tries();
  for (let t = 0; t < RESTART_GIVE_UP_MS; t += RESTART_RETRY_MS) {
    await reopen(false);
    timers.advance(RESTART_RETRY_MS);
    await tick();
  }
  await reopen(false);
  assert.equal(world.log.at(-1), 'end');
  assert.ok(tries() - before >= RESTART_GIVE_UP_MS / RESTART_RETRY_MS, `${tries() - before} tries`);
  assert.deepEqual([track.ended, groupState(g)], [true, 'ended']);
});

test('restart: muted while a refused reopen waits: released, and the unmute reopens it as any other', async () => {
  const { timers, track, g, world, machine, set, reopen } = setup();
  machine.restart(g);
  await reopen(false);
  set(track, false);
  assert.equal(g.state, 'acquiring', 'the page’s change does not act mid-restart');
  timers.advance(RESTART_RETRY_MS);
  await tick();
  assert.deepEqual([g.state, groupState(g)], ['off', 'released']);
  assert.deepEqual(world.log, ['stop', 'reacquire']);
  set(track, true);
  assert.deepEqual(world.log, ['stop', 'reacquire', 'reacquire']);
  await reopen(true);
  assert.equal(groupState(g), 'capturing');
});

test('restart: a device no longer listed is left to the audio server; a listed one is reopened', async () => {
  let here = false;
  const { g, world, machine, reopen } = setup({ present: async () => here });
  assert.equal(machine.restart(g), true);
  await tick();
  assert.deepEqual(world.log, [], 'gone: nothing stopped');
  assert.equal(g.state, 'on');
  here = true;
  machine.restart(g);
  await tick();
  assert.deepEqual(world.log, ['stop', 'reacquire']);
  await reopen(true);
  assert.equal(groupState(g), 'capturing');
});

test('restart: only a device that is on; not released, reopening or ended', async () => {
  const { track, g, world, machine, set, release, reopen } = setup();
  await release();
  assert.equal(machine.restart(g), false);
  set(track, true);
  assert.equal(g.state, 'acquiring');
  assert.equal(machine.restart(g), false);
  await reopen(false);
  assert.equal(machine.restart(g), false);
  assert.deepEqual(world.log, ['ask', 'stop', 'reacquire', 'end']);
});

test('the relay drops calls until the machine is connected, then forwards each', () => {
  const relay = machineRelay<G>();
  const g = { label: 'Mic' } as G;
  const calls: string[] = [];
  relay.evaluate(g);
  assert.equal(relay.prime(g, 10, KEPT.primed), false);
  const machine: GroupMachine<G> = {
    evaluate: () => calls.push('evaluate'),
    reconsider: () => calls.push('reconsider'),
    unhold: (_g, why) => calls.push(`unhold ${why}`),
    prime: (_g, ms, why) => calls.push(`prime ${ms} ${why}`) > 0,
    restart: () => calls.push('restart') > 0,
  };
  assert.equal(relay.restart(g), false);
  relay.connect(machine);
  relay.evaluate(g);
  relay.reconsider(g);
  relay.unhold(g, RECORDING);
  assert.equal(relay.prime(g, 10, KEPT.primed), true);
  assert.equal(relay.restart(g), true);
  assert.deepEqual(calls, [
    'evaluate',
    'reconsider',
    `unhold ${RECORDING}`,
    `prime 10 ${KEPT.primed}`,
    'restart',
  ]);
});
