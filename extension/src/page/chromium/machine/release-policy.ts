// Firefox's release rule (media.getusermedia.microphone.off_while_disabled.*): once every live track on
// a device is disabled, the device goes off after max(0, delay - time since it was last turned on).
// A device that has been on for longer than `delay` is released at once; re-enable is immediate and
// cancels a pending release. Pure functions: the interposition supplies the clock.
import { KEPT } from '../../../shared/release-decision.ts';
import { type Audibility, plainAudibility } from '../graph/audibility.ts';

/** Milliseconds from `nowMs` until the device may be released. */
export function releaseWaitMs(delayMs: number, nowMs: number, lastOnMs: number): number {
  const sinceOn = Math.max(0, nowMs - lastOnMs);
  return Math.max(0, delayMs - sinceOn);
}

export interface MemberView {
  enabled: boolean;
  ended: boolean;
}

/** What a device group should do given its members' page-visible state. */
export type GroupAction =
  /** Nothing lives on the device any more (the page stopped every track). */
  | { kind: 'idle' }
  /** Something hears the device: it must be on (reacquire if it is off). `listening` says why when
   * the page is muted elsewhere (a path is silenced) yet still listens: the device is kept open. */
  | { kind: 'on'; listening: string | null }
  /** Nothing hears the device and a path was silenced: release after `waitMs`. */
  | { kind: 'release'; waitMs: number };

/** `heard` is the group's audibility (audibility.ts); without it, the plain rule: enabled tracks hear. */
export function decideGroup(
  members: Iterable<MemberView>,
  delayMs: number,
  nowMs: number,
  lastOnMs: number,
  heard?: Audibility,
): GroupAction {
  const list = [...members];
  if (!list.some((m) => !m.ended)) return { kind: 'idle' };
  const a = heard ?? plainAudibility(list, KEPT.clone);
  if (a.hears !== null) return { kind: 'on', listening: a.silenced ? a.hears : null };
  // Neither heard nor silenced: enabled tracks whose paths end nowhere yet (a node not connected).
  if (!a.silenced) return { kind: 'on', listening: null };
  return { kind: 'release', waitMs: releaseWaitMs(delayMs, nowMs, lastOnMs) };
}
