// Firefox's release rule (media.getusermedia.microphone.off_while_disabled.*): once every live track on
// a device is disabled, the device goes off after max(0, delay - time since it was last turned on).
// A device that has been on for longer than `delay` is released at once; re-enable is immediate and
// cancels a pending release. Pure functions: the interposition supplies the clock.

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
  /** Some live track is enabled: the device must be on (reacquire if it is off). */
  | { kind: 'on' }
  /** Every live track is disabled: release after `waitMs`. */
  | { kind: 'release'; waitMs: number };

export function decideGroup(
  members: Iterable<MemberView>,
  delayMs: number,
  nowMs: number,
  lastOnMs: number,
): GroupAction {
  let live = 0;
  for (const m of members) {
    if (m.ended) continue;
    live++;
    if (m.enabled) return { kind: 'on' };
  }
  if (live === 0) return { kind: 'idle' };
  return { kind: 'release', waitMs: releaseWaitMs(delayMs, nowMs, lastOnMs) };
}
