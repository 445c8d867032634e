// The page world's registry for one realm: the one object the patched surfaces (patch/) and the group
// machine (interpose.ts) share. It composes its parts in registry/: members (page-visible <-> real
// tracks, groups, roots), shadows, the audio graph, the patches' hooks, release, reacquire and swap,
// sender restarts, reopen, the page's peer connections and the report.
import { ENDED } from '../../shared/release-decision.ts';
import type { Originals, Track } from '../common/originals.ts';
import type { Reopened } from './machine/group-machine.ts';
import { createConnections } from './registry/connections.ts';
import { createGraph } from './registry/graph.ts';
import { createHooks } from './registry/hooks.ts';
import { createMembers, type Group, type Member } from './registry/members.ts';
import { createReacquire, type ReacquireDeps } from './registry/reacquire.ts';
import { endTracks, stopTracks } from './registry/release.ts';
import { createOpen, refusalReason } from './registry/reopen.ts';
import { reportGroups } from './registry/report.ts';
import { restartStarved } from './registry/sender-restarts.ts';
import { createSenderStandIns } from './registry/sender-stand-ins.ts';
import { createShadows } from './registry/shadows.ts';
import { swapIn } from './registry/swap.ts';

export type { Group, Member, Root } from './registry/members.ts';
export type { Shadowed } from './registry/shadows.ts';

/** Where the registry hands decisions back to the group machine. */
export interface RegistryHooks {
  evaluate(g: Group): void;
  unhold(g: Group, reason: string): void;
}

export type TrackRegistry = ReturnType<typeof createTrackRegistry>;

/** `open` reopens a root's device on reacquire; by default the original getUserMedia, while the
 * permission holds and within a deadline (registry/reopen.ts). */
export function createTrackRegistry(
  o: Originals,
  realm: number,
  hooks: RegistryHooks,
  open: ReacquireDeps['open'] = createOpen(o, () => null),
) {
  const patches = createHooks<Group, Member, Track>();
  const standIns = createSenderStandIns(o);
  const book = createMembers(o, realm, {
    evaluate: hooks.evaluate,
    ended: (m) => {
      for (const s of m.senders) standIns.drop(s);
      patches.ended(m);
    },
  });
  const shadows = createShadows(o, book);
  const graph = createGraph(o, book.members);
  const connections = createConnections(o);

  /** Forget consumers that can never play the mic again (closed contexts, streams with no live managed
   * track, stopped recorders), so long calls do not accumulate them and swaps stay cheap. */
  function prune(): void {
    patches.prune();
    shadows.prune();
    standIns.prune();
  }

  const swap = (m: Member, next: Track) =>
    swapIn(o, { rebind: book.rebind, swapTrack: shadows.swapTrack, standIns }, m, next);
  const reacquire = createReacquire(o, {
    prune,
    restartStarved: (g) => restartStarved(() => graph.roots(g), o.setTimeout),
    open,
    swapIn: swap,
    swapped: patches.swapped,
  });

  return {
    members: book.members,
    byReal: book.byReal,
    groups: book.groups,
    shadowPage: shadows.shadowPage,
    managedIn: book.managedIn,
    realOf: book.realOf,
    liveIn: book.liveIn,
    makeShadow: shadows.makeShadow,
    hideInactive: shadows.hideInactive,
    shadowed: shadows.shadowed,
    dropShadow: shadows.dropShadow,
    groupFor: book.groupFor,
    addMember: book.addMember,
    pinDevice: book.pinDevice,
    evaluate: hooks.evaluate,
    unhold: hooks.unhold,
    onPrune: patches.onPrune,
    onSwapped: patches.onSwapped,
    onEnded: patches.onEnded,
    markEnded: book.markEnded,
    addHold: patches.addHold,
    addConsumers: graph.addConsumers,
    setClones: graph.setClones,
    markSeen: graph.markSeen,
    trackVertex: graph.trackVertex,
    audibility: graph.audibility,
    /** Something on any device's paths changed (a sender, a node, a derived track): decide again. */
    evaluateAll(): void {
      for (const g of [...book.groups.values()]) hooks.evaluate(g);
    },
    holdReason: patches.holdReason,
    onRequest: patches.onRequest,
    requested: patches.requested,
    onOpened: patches.onOpened,
    opened: patches.opened,
    /** A peer connection the page uses (its received audio is the far end's: echo-guard.ts). */
    addConnection: connections.add,
    farEndLevel: connections.farEndLevel,
    refreshOwnStreams: connections.refreshOwn,
    /** With `keepSending`, the senders send silence from a stand-in while released (sender-stand-ins.ts). */
    stopTracks: (g: Group, keepSending = false) =>
      stopTracks(o, g, keepSending ? { of: standIns, alias: (t, m) => book.byReal.set(t, m) } : undefined),
    /** The stand-in a sender carries while its device is released, if any. */
    standInOn: standIns.on,
    pruneStandIns: standIns.prune,
    endTracks: (g: Group) => endTracks(o, book.markEnded, g),
    /** Reopen the device and swap fresh tracks in, or say why it could not be reopened or went away
     * meanwhile (the group machine then ends the tracks). */
    reacquire: async (g: Group): Promise<Reopened> => {
      const outcome = await reacquire(g);
      if (outcome.kind === 'swapped') return { ok: true };
      return { ok: false, why: outcome.kind === 'lost' ? ENDED.gone : refusalReason(outcome.error) };
    },
    /** `grantMayExpire`: the site's permission may be a one-time one (grant-keeper.ts). */
    report: (grantMayExpire = false) => reportGroups(book.groups, o.dateNow, grantMayExpire),
  };
}
