// One capture device's lifecycle in the page world: on -> (nothing hears it: every path from its tracks
// is silenced (audibility.ts), delay, nothing holds it, the background allows) -> off -> (a path hears
// again) -> acquiring -> on, or ended when the device cannot be reopened. While off, `prime` reopens it
// ahead of an expected unmute (page/chromium/guards/intent.ts) or for a moment so that a one-time permission does not
// expire (page/chromium/guards/grant-keeper.ts): the device is on again, still muted, until the hold runs out.
// While on, `restart` reopens a device whose capture stopped delivering (guards/capture-watch.ts): its
// stalled tracks stop and it is reopened as after a release (a fresh capture in the same renderer would
// share the stalled source), tried again every RESTART_RETRY_MS while refused (an audio server still
// stopped) for RESTART_GIVE_UP_MS, then the page's tracks end: they never stay live and silent for good.
// Pure: the page supplies the clock, timers, the background's answer and what happens to the real
// tracks (effects), so the transitions run under `node --test`.
import type { GroupState } from '../../../shared/messages/page-content.ts';
import { ENDED, KEPT, standingDecision } from '../../../shared/release-decision.ts';
import type { PolicyAnswer, ReleaseConfig } from '../../common/bridge.ts';
import type { Audibility } from '../graph/audibility.ts';
import { decideGroup, type MemberView } from './release-policy.ts';

/** on: the real tracks run; off: released (stopped); acquiring: getUserMedia is reopening them. */
export type Phase = 'on' | 'off' | 'acquiring';

/** What the machine reads and writes on a group (the page's Group adds its tracks and report fields). */
export interface MachineGroup {
  readonly label: string;
  readonly members: Iterable<MemberView>;
  state: Phase;
  /** now() when the device was last turned on: the delay counts from there (Firefox's rule). */
  lastOnMs: number;
  /** The pending release's timer handle, null when none. */
  timer: unknown;
  /** Why a muted device is kept open; null when it is not being kept. */
  kept: string | null;
  /** Why the page still hears a device it muted elsewhere (audibility.ts); null when it does not. */
  listening: string | null;
  /** Bumped by every decision that voids a pending release (timer or policy question in flight). */
  seq: number;
  /** The last decision was that nothing hears the device (the page muted it). */
  silenced: boolean;
  /** A reopen while muted (`prime`) keeps the device on until `untilMs` instead of the delay rule, and
   * says why (KEPT.primed, KEPT.keepalive); null when none. An unmute or the release ends it. */
  hold: { untilMs: number; why: string } | null;
  /** Why the page's tracks were ended by a reopen that could not be done (ENDED), else null. */
  endedWhy: string | null;
}

/** A reopen's result: the fresh tracks are in, or why they are not (ENDED). */
export type Reopened = { ok: true } | { ok: false; why: string };

/** A restart's reopen that is refused is tried again this much later ... */
export const RESTART_RETRY_MS = 500;
/** ... for this long; the next refusal ends the page's tracks. */
export const RESTART_GIVE_UP_MS = 60_000;

export interface GroupEffects<G extends MachineGroup> {
  now(): number;
  setTimer(cb: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
  /** The release settings the content script pushed for this site. */
  config(): ReleaseConfig;
  /** Something in the page keeps the device open right now (a recording), with why; else null. */
  holdReason(g: G): string | null;
  /** Ask the background (site switch, Bluetooth) whether the device may be released now. */
  askPolicy(g: G): Promise<PolicyAnswer>;
  /** The page world's last word once the background allows: why a release would cost the first words
   * of an unmute here (a reopen slower than the page's unmute key gives), else null. After the
   * background's answer, so that its reason (one the host would fix) is the one shown. */
  slowReopen?(g: G): string | null;
  /** Release: stop the real tracks (the page-visible ones stay live). */
  stopTracks(g: G): void;
  /** Reopen the device and swap fresh tracks in, or say why it could not be (then the tracks end). */
  reacquire(g: G): Promise<Reopened>;
  /** The device cannot come back: end the page's tracks (they fire `ended`, as on unplug). */
  endTracks(g: G): void;
  /** Whether the device is listed now (restart: a capture stalled because its device went away is left
   * to the audio server, which moves it back when the device returns); without it, always. */
  present?(g: G): Promise<boolean>;
  /** The group's reportable state may have changed. */
  changed(g: G): void;
  /** What hears the device (audibility.ts); without it the plain rule (enabled tracks hear). */
  audibility?(g: G): Audibility;
  /** The page unmuted a device it had muted (something hears it again). */
  heard?(g: G): void;
}

/** The machine's part of a new group: on since `nowMs`, nothing pending, nothing kept. */
export function freshMachineState(nowMs: number) {
  return {
    state: 'on' as Phase,
    lastOnMs: nowMs,
    timer: null as unknown,
    kept: null as string | null,
    listening: null as string | null,
    seq: 0,
    silenced: false,
    hold: null as MachineGroup['hold'],
    endedWhy: null as string | null,
  };
}

/** The state reported for a group (content script, badge, popup). */
export function groupState(g: MachineGroup): GroupState {
  let live = false;
  for (const m of g.members) if (!m.ended) live = true;
  if (!live) return 'ended';
  if (g.state === 'off') return 'released';
  return keptReason(g) !== null ? 'not_released' : 'capturing';
}

/** Why the device is kept open while muted, or null. */
export function keptReason(g: MachineGroup): string | null {
  return g.kept ?? g.listening ?? (g.state !== 'off' ? (g.hold?.why ?? null) : null);
}

export interface GroupMachine<G extends MachineGroup> {
  /** Re-decide after any change to the members (enabled, stopped, added) or to the config. */
  evaluate(g: G): void;
  /** Forget why the device was kept and any pending release, then decide afresh (new config). */
  reconsider(g: G): void;
  /** A hold (see holdReason) ended: drop it if it is why the device is kept, and decide afresh. */
  unhold(g: G, reason: string): void;
  /** Reopen a released device while the page keeps it muted, and keep it on for `holdMs` (then the
   * release comes back unless the page unmuted meanwhile). False when the device is not released. */
  prime(g: G, holdMs: number, why: string): boolean;
  /** The device is on and its capture delivers nothing (capture-watch.ts): stop it and reopen it now,
   * trying again while refused (RESTART_GIVE_UP_MS). False when the device is not on. */
  restart(g: G): boolean;
}

/** The group machine as the parts built before it see it (the registry, the grant keeper: the machine
 * acts through them, so they come first). Calls before `connect` do nothing: nothing is patched yet,
 * so nothing can ask. */
export interface MachineRelay<G extends MachineGroup> extends GroupMachine<G> {
  connect(machine: GroupMachine<G>): void;
}

export function machineRelay<G extends MachineGroup>(): MachineRelay<G> {
  let m: GroupMachine<G> | null = null;
  return {
    connect(machine) {
      m = machine;
    },
    evaluate: (g) => m?.evaluate(g),
    reconsider: (g) => m?.reconsider(g),
    unhold: (g, reason) => m?.unhold(g, reason),
    prime: (g, holdMs, why) => m?.prime(g, holdMs, why) ?? false,
    restart: (g) => m?.restart(g) ?? false,
  };
}

export function createGroupMachine<G extends MachineGroup>(fx: GroupEffects<G>): GroupMachine<G> {
  function cancelTimer(g: G): void {
    if (g.timer !== null) fx.clearTimer(g.timer);
    g.timer = null;
  }

  const decide = (g: G, delayMs: number) =>
    decideGroup(g.members, delayMs, fx.now(), g.lastOnMs, fx.audibility?.(g));
  const nothingHears = (g: G) => decide(g, 0).kind === 'release';
  const stillWanted = (g: G, seq: number) => seq === g.seq && g.state === 'on' && nothingHears(g);

  function evaluate(g: G): void {
    const cfg = fx.config();
    const action = decide(g, cfg.delay_ms);
    const silenced = action.kind === 'release';
    if (g.silenced && !silenced) fx.heard?.(g);
    g.silenced = silenced;
    if (action.kind !== 'release') {
      cancelTimer(g);
      g.kept = null;
      g.hold = null;
      // Kept open because the page listens while muted (or nothing is muted: capturing).
      g.listening = action.kind === 'on' ? action.listening : null;
      g.seq++;
      if (action.kind === 'on' && g.state === 'off') void acquire(g);
    } else if (g.state === 'on') {
      g.listening = null;
      const standing = standingDecision(cfg);
      if (!standing.allow) {
        cancelTimer(g);
        g.kept = standing.reason;
      } else if (g.timer === null && g.kept === null) {
        const seq = ++g.seq;
        const waitMs = g.hold ? Math.max(0, g.hold.untilMs - fx.now()) : action.waitMs;
        g.timer = fx.setTimer(() => void fire(g, seq), waitMs);
      }
    }
    fx.changed(g);
  }

  async function fire(g: G, seq: number): Promise<void> {
    g.timer = null;
    if (!stillWanted(g, seq)) return;
    const hold = fx.holdReason(g);
    if (hold !== null) {
      g.kept = hold;
      fx.changed(g);
      return;
    }
    const answer = await fx.askPolicy(g);
    if (!stillWanted(g, seq)) return;
    if (!answer.allow) {
      g.kept = answer.reason ?? KEPT.policy;
      fx.changed(g);
      return;
    }
    const slow = fx.slowReopen?.(g) ?? null;
    if (slow !== null) {
      g.kept = slow;
      fx.changed(g);
      return;
    }
    fx.stopTracks(g);
    g.state = 'off';
    g.hold = null;
    fx.changed(g);
  }

  function fail(g: G, why: string): void {
    g.state = 'off';
    g.hold = null;
    g.endedWhy = why;
    fx.endTracks(g);
    fx.changed(g);
  }

  async function acquire(g: G): Promise<void> {
    g.state = 'acquiring';
    fx.changed(g);
    let result: Reopened = { ok: false, why: ENDED.gone };
    try {
      result = await fx.reacquire(g);
    } catch {} // our bookkeeping failed midway: the device is as good as gone
    if (!result.ok) {
      fail(g, result.why);
      return;
    }
    g.state = 'on';
    g.lastOnMs = fx.now();
    evaluate(g);
  }

  /** A restart's reopen, tried again while refused until `deadline`; the page muting meanwhile leaves
   * the device released (its unmute reopens it as any other). */
  async function reopenStalled(g: G, deadline: number): Promise<void> {
    g.state = 'acquiring';
    fx.changed(g);
    let result: Reopened = { ok: false, why: ENDED.gone };
    try {
      result = await fx.reacquire(g);
    } catch {}
    if (result.ok) {
      g.state = 'on';
      g.lastOnMs = fx.now();
      evaluate(g);
      return;
    }
    if (groupState(g) === 'ended') return;
    if (fx.now() >= deadline) {
      fail(g, result.why);
      return;
    }
    // Still acquiring while it waits: the page's own changes meanwhile neither release nor reopen it.
    await new Promise<void>((resolve) => fx.setTimer(resolve, RESTART_RETRY_MS));
    if (groupState(g) === 'ended') return; // the page stopped its tracks meanwhile
    if (nothingHears(g)) {
      g.state = 'off'; // muted meanwhile: released (its tracks are stopped); the unmute reopens it
      evaluate(g);
      return;
    }
    await reopenStalled(g, deadline);
  }

  return {
    evaluate,
    reconsider(g) {
      cancelTimer(g);
      g.kept = null;
      evaluate(g);
    },
    unhold(g, reason) {
      if (g.kept === reason) g.kept = null;
      evaluate(g);
    },
    prime(g, holdMs, why) {
      if (g.state !== 'off' || !g.silenced) return false;
      g.hold = { untilMs: fx.now() + holdMs, why };
      void acquire(g);
      return true;
    },
    restart(g) {
      if (g.state !== 'on') return false;
      const go = () => {
        if (g.state !== 'on') return; // released or reopened meanwhile
        cancelTimer(g);
        g.seq++; // a release decided before the stall is void: the reopen decides afresh
        g.kept = null;
        fx.stopTracks(g);
        g.state = 'off';
        void reopenStalled(g, fx.now() + RESTART_GIVE_UP_MS);
      };
      if (!fx.present) go();
      else
        void fx.present(g).then(
          (here) => here && go(),
          () => go(),
        );
      return true;
    },
  };
}
