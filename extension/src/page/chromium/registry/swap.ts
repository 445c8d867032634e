// A fresh track goes in behind a member's page-visible track after a reacquire: it becomes the
// member's real track (enabled as the page left it, with the page's last applied constraints) and
// takes the old one's place on the member's senders and in every shadow stream.
import type { Originals, Track } from '../../common/originals.ts';
import type { Member } from './members.ts';
import type { SenderStandIns } from './sender-stand-ins.ts';

export interface SwapDeps {
  /** The member's real track is `next` from now on (members.ts rebind). */
  rebind(m: Member, next: Track): void;
  /** Put `next` in place of `old` in the shadow streams (shadows.ts swapTrack). */
  swapTrack(old: Track, next: Track): void;
  /** The silent tracks released senders carry (sender-stand-ins.ts). */
  standIns?: SenderStandIns;
}

export function swapIn(o: Originals, deps: SwapDeps, m: Member, next: Track): void {
  const old = m.real;
  deps.rebind(m, next);
  o.setEnabled.call(next, m.enabled && !m.heldBack);
  if (m.applied) o.applyConstraints.call(next, m.applied).catch(() => {});
  swapSenders(o, m, old, next, deps.standIns);
  deps.swapTrack(old, next);
}

/** Only where the sender still carries the old track, or the stand-in the release put there: one the
 * page emptied (removeTrack, replaceTrack(null)) or moved to another track stays as the page left it,
 * and is forgotten. */
export function swapSenders(
  o: Originals,
  m: Member,
  old: Track,
  next: Track,
  standIns?: SenderStandIns,
): void {
  for (const s of m.senders) {
    const carried = o.senderTrack?.call(s);
    const standIn = standIns?.on(s) ?? null;
    if (carried === old || (standIn !== null && carried === standIn)) {
      const p = o.replaceTrack?.call(s, next);
      if (p)
        p.then(
          () => standIns?.drop(s),
          () => standIns?.drop(s),
        );
      else standIns?.drop(s);
    } else {
      standIns?.drop(s);
      if (carried !== next) m.senders.delete(s);
    }
  }
}
