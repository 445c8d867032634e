// The way back from a release: reopen every root's device (exact deviceId, the page's constraints) and
// swap the fresh tracks in behind the page's objects, in steps (reopenRoots, openRoots, swapFresh). The
// outcome says what happened (swapped, refused with the browser's error, lost between open and swap);
// the group machine reads only whether it worked. How a root is opened is passed in (`open`).
import type { Originals, Track } from '../../common/originals.ts';
import type { Group, Member, Root } from './members.ts';

export type ReacquireOutcome =
  /** Fresh tracks are in (`members` may be empty: nothing needed one). */
  | { kind: 'swapped'; members: Member[] }
  /** A root's getUserMedia failed (device gone or busy, permission withdrawn); nothing was swapped. */
  | { kind: 'refused'; error: unknown }
  /** The device went away between open and swap: a fresh track had ended when it went in. */
  | { kind: 'lost'; members: Member[] };

export interface ReacquireDeps {
  /** Forget consumers that can no longer play the mic, so the swap touches only live ones. */
  prune(): void;
  /** Restart the senders the release starved; settles when done (or given up on). */
  restartStarved(g: Group): Promise<unknown>;
  /** Open the root's device (the original getUserMedia with `root.constraints`). */
  open(root: Root): Promise<MediaStream>;
  /** Put a fresh track in behind the member (swap.ts). */
  swapIn(m: Member, next: Track): void;
  /** Tell the patches which members got fresh tracks (hooks.ts swapped). */
  swapped(members: Member[]): void;
}

/** The roots to reopen: one per getUserMedia call behind the group's live members. */
export function reopenRoots(g: Group): Set<Root> {
  const roots = new Set<Root>();
  for (const m of g.members) if (!m.ended) roots.add(m.root);
  return roots;
}

export type Opened = { ok: true; fresh: Map<Root, MediaStream> } | { ok: false; error: unknown };

/** Open each root in turn; on the first failure stop every track opened so far. */
export async function openRoots(
  o: Originals,
  roots: Iterable<Root>,
  open: (root: Root) => Promise<MediaStream>,
): Promise<Opened> {
  const fresh = new Map<Root, MediaStream>();
  try {
    for (const root of roots) fresh.set(root, await open(root));
  } catch (error) {
    for (const s of fresh.values()) for (const t of o.getTracks.call(s)) o.stop.call(t);
    return { ok: false, error };
  }
  return { ok: true, fresh };
}

/** Swap each root's fresh track in: members on that root, not stopped by the page, holding a dead
 * real track. A fresh track nobody needs is stopped. Returns the members swapped. */
export function swapFresh(
  o: Originals,
  g: Group,
  fresh: Map<Root, MediaStream>,
  swapIn: (m: Member, next: Track) => void,
): Member[] {
  const swapped: Member[] = [];
  for (const [root, stream] of fresh) {
    const base = o.getAudioTracks.call(stream)[0];
    if (!base) continue;
    const need = [...g.members].filter((m) => m.root === root && !m.ended && o.isEnded(m.real));
    if (need.length === 0) {
      o.stop.call(base);
      continue;
    }
    need.forEach((m, i) => {
      swapIn(m, i === 0 ? base : o.clone.call(base));
      swapped.push(m);
    });
  }
  return swapped;
}

export function createReacquire(o: Originals, deps: ReacquireDeps) {
  return async function reacquire(g: Group): Promise<ReacquireOutcome> {
    deps.prune();
    const roots = reopenRoots(g);
    // Started before the device opens, so the restarts run while it does.
    const restarted = deps.restartStarved(g);
    const opened = await openRoots(o, roots, deps.open);
    if (!opened.ok) return { kind: 'refused', error: opened.error };
    await restarted;
    const members = swapFresh(o, g, opened.fresh, deps.swapIn);
    if (members.some((m) => o.isEnded(m.real))) return { kind: 'lost', members };
    if (members.length > 0) deps.swapped(members);
    return { kind: 'swapped', members };
  };
}
