// Firefox build: micoff's part of a muted call (docs/design/firefox-install.md "micoff's part").
// Firefox's own release (media.getusermedia.microphone.off_while_disabled) closes the muted microphone,
// but the call goes on encoding and sending the disabled track's silence. Once Firefox's release has
// turned the device off (its rule, with micoff's delay) and QUIET_HOLD_MS more, every sender carrying
// one of the device's tracks gets no track (firefox/senders.ts); the page's first `enabled = true` puts
// each back while Firefox reopens the device. The device itself stays Firefox's to release.
import { QUIET_HOLD_MS } from '../../shared/firefox-release.ts';
import type { Bridge } from '../common/bridge.ts';
import { keepSending } from '../common/far-end.ts';
import type { Realm } from '../common/originals.ts';
import type { MuteWatch } from './mute-observer.ts';
import { followSenders } from './senders.ts';

/** When micoff takes a muted device's senders off the wire: Firefox's release moment (the device off
 * once it has been on for the delay, counted from the mute) plus the hold. */
export function quietAt(
  d: { mutedSince: number; onSince: number },
  delayMs: number,
  holdMs = QUIET_HOLD_MS,
): number {
  return d.mutedSince + Math.max(0, delayMs - (d.mutedSince - d.onSince)) + holdMs;
}

/** Wires the quiet senders onto a Firefox page world. Returns what the observer calls after each change
 * of the mute book (before it reports), or null when the realm has no WebRTC. */
export function quietSenders(w: Realm, watch: MuteWatch, bridge: Bridge): (() => void) | null {
  const { o, book } = watch;
  const senders = followSenders(w, o);
  if (!senders) return null;
  /** The pending quiet per device: when, and the timer. */
  const timers = new Map<string, { at: number; handle: number }>();

  /** Brings the senders in line with the book; returns whether the report changed. */
  const evaluate = (): boolean => {
    const config = bridge.config();
    const { delay_ms } = config;
    // Where a far end watches for packets, the senders go on sending the disabled track's silence.
    const release = config.release && !keepSending(config, w);
    const now = o.dateNow();
    const muted = new Map(book.muted().map((m) => [m.key, m]));
    const due = (key: string | null) => {
      const m = key === null ? undefined : muted.get(key);
      return !!m && release && now >= quietAt(m, delay_ms);
    };
    // Back on the wire: the device was unmuted, the track stopped, or the release switched off.
    for (const [s, t] of senders.quieted()) if (!due(book.deviceOf(t))) void senders.restore(s);
    for (const [key, timer] of timers) {
      if (muted.has(key)) continue;
      o.clearTimeout(timer.handle);
      timers.delete(key);
    }
    for (const m of muted.values()) {
      if (!release) continue;
      const at = quietAt(m, delay_ms);
      if (now >= at) {
        for (const t of m.tracks) for (const s of senders.carrying(t)) senders.quiet(s, t);
        continue;
      }
      const pending = timers.get(m.key);
      if (pending?.at === at) continue;
      if (pending) o.clearTimeout(pending.handle);
      timers.set(m.key, { at, handle: o.setTimeout(wake(m.key), at - now) });
    }
    const quiet = new Set<string>();
    for (const [, t] of senders.quieted()) {
      const key = book.deviceOf(t);
      if (key !== null) quiet.add(key);
    }
    return book.setQuiet(quiet, now);
  };
  const update = () => {
    try {
      if (evaluate()) watch.report();
    } catch {}
  };
  const wake = (key: string) => () => {
    timers.delete(key);
    update();
  };
  // The page put a track on a sender (a muted device's senders go quiet too once due); the settings
  // changed (the delay, release switched off for the site).
  senders.onChange(update);
  bridge.onConfig(update);
  return () => {
    evaluate();
  };
}
