// Firefox build: micoff's part of a muted call. Firefox's own release
// (media.getusermedia.microphone.off_while_disabled, which micoff's installer switches on) closes the
// muted microphone, but the call goes on encoding the disabled track's silence and sending it, 50
// packets a second (its WebRTC call thread, encoder and socket process: 0.4-0.5 of what a muted call
// costs, e2e/tools/firefox-floor.ts). micoff takes the muted device's senders off the wire: once Firefox's
// release has turned the device off (its rule: `max(0, delay - time the device has been on)` after the
// mute, with micoff's delay, the one the installer gave Firefox) and QUIET_HOLD_MS more, every sender
// carrying one of the device's tracks gets no track (firefox/senders.ts); the first enable puts each
// back, in the page's own `enabled = true`, while Firefox reopens the device.
//
// The device itself stays Firefox's to release: micoff neither stops nor opens it. Without the pref the
// device stays open, and micoff still stops the sending of its silence.
//
// What stays: Firefox's audio graph and its playback stream at the audio server run for as long as the
// call has a transceiver (every RTCRtpReceiver's track lives in the window's graph from the start, and
// the graph plays to the server while any audio track is in it: `MediaTrackGraphImpl::AudioTrackPresent`);
// the page cannot end those without ending tracks it holds. docs/design/firefox-install.md,
// "micoff's part".
import { QUIET_HOLD_MS } from '../../shared/firefox-release.ts';
import type { Bridge } from '../common/bridge.ts';
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
    const { delay_ms, release } = bridge.config();
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
