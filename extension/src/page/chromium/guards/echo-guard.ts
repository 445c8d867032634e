// Echo as if never released (docs/design/release-on-mute.md "Echo after an unmute"): a reopened capture
// starts a fresh echo canceller, which lets the far end's voice back through for a second or so. While
// a fresh capture is young (GUARD_MS) and unmuted, its audio is held back (the real track disabled)
// whenever the far end is audible, read from the received RTP sources every POLL_MS, and for
// HANGOVER_MS past the last audible packet. Pure apart from its deps, so it runs under `node --test`.

export const GUARD_MS = 2500;
export const POLL_MS = 20;
/** A received source at or above this level (about -40 dBov) is the far end talking. */
export const FAR_END_LEVEL = 0.01;
export const HANGOVER_MS = 300;

export interface EchoGuardDeps<M> {
  now(): number;
  setTimer(cb: () => void, ms: number): unknown;
  clearTimer(handle: unknown): void;
  /** The loudest received source right now (0 when none plays). */
  farEndLevel(): number;
  /** Hold a member's outgoing audio back (true) or let it through (false). */
  hold(m: M, on: boolean): void;
}

export interface EchoGuard<M> {
  /** Fresh captures started now for these members (a reacquire swapped them in). */
  opened(members: M[]): void;
  /** A member ended or was released again: forget it (its hold is lifted). */
  drop(m: M): void;
  /** Members under guard now (tests, the report). */
  guarded(): number;
}

export function createEchoGuard<M>(deps: EchoGuardDeps<M>): EchoGuard<M> {
  /** Member -> when its capture opened. */
  const young = new Map<M, number>();
  const held = new Set<M>();
  let lastAudibleMs = Number.NEGATIVE_INFINITY;
  let timer: unknown = null;

  function setHold(m: M, on: boolean): void {
    if (on === held.has(m)) return;
    if (on) held.add(m);
    else held.delete(m);
    deps.hold(m, on);
  }

  function poll(): void {
    timer = null;
    const now = deps.now();
    let level = 0;
    try {
      level = deps.farEndLevel();
    } catch {} // unreadable: as if quiet (the words go through)
    if (level >= FAR_END_LEVEL) lastAudibleMs = now;
    const hold = now - lastAudibleMs < HANGOVER_MS;
    for (const [m, since] of young) {
      if (now - since >= GUARD_MS) {
        young.delete(m);
        setHold(m, false);
      } else setHold(m, hold);
    }
    if (young.size > 0) timer = deps.setTimer(poll, POLL_MS);
  }

  return {
    opened(members) {
      const now = deps.now();
      for (const m of members) young.set(m, now);
      if (timer === null && young.size > 0) poll();
    },
    drop(m) {
      young.delete(m);
      setHold(m, false);
      if (young.size === 0 && timer !== null) {
        deps.clearTimer(timer);
        timer = null;
      }
    },
    guarded: () => young.size,
  };
}

/** A received source as `getSynchronizationSources()` gives it. */
export interface SourceLevel {
  audioLevel?: number;
  /** When its last packet played out (ms since the epoch). */
  timestamp: number;
}

/** The loudest source whose last packet played within `freshMs` (older ones have gone quiet). */
export function loudest(sources: Iterable<SourceLevel>, nowMs: number, freshMs = 200): number {
  let level = 0;
  for (const s of sources) {
    if (nowMs - s.timestamp > freshMs) continue;
    const l = s.audioLevel ?? 0;
    if (Number.isFinite(l) && l > level) level = l;
  }
  return level;
}
