// Echo as if never released (docs/design/release-on-mute.md "Echo after an unmute"). A reopened capture
// starts a fresh echo canceller: it has no estimate of the echo path and lets the far end's voice,
// played by the speakers and heard again by the microphone, through for about a second, partly for
// about three (measured), where the plain flip's canceller stayed converged. While a fresh capture is
// young (GUARD_MS since it opened) and the page has it unmuted, the outgoing audio is held back (the
// real track disabled: the call sends silence, the canceller keeps adapting on the microphone and the
// far end's playout) whenever the far end is audible, and let through at once when it is quiet. The
// user's first words are dropped only when the far end talks at that very moment; an unmute that
// follows a reopen ahead of it (page/chromium/guards/intent.ts) by GUARD_MS or more is not touched at all.
//
// The far end's level is the audio level of the page's received RTP sources
// (`RTCRtpReceiver.getSynchronizationSources()`, the level of the last packet played out, 0..1): read
// every POLL_MS during the guard only, nothing otherwise. The echo follows what plays by the playout
// and capture latencies, so the hold lasts HANGOVER_MS past the last audible packet.
// Pure apart from its deps, so the rule runs under `node --test`.

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
