// Firefox build: the page's RTCRtpSenders, followed so that micoff can take one off the wire while its
// microphone is muted (firefox/quiet.ts) and put it back at the unmute, without the page seeing it.
// Off the wire means no track (`replaceTrack(null)`): Firefox ignores an audio encoding's `active`.
// The page still reads its own track from `sender.track` and gets its sender's statistics from
// `pc.getStats(track)`; a sender whose `dtmf` the page read, or that the page replaces or removes, is
// let go first (docs/design/firefox-install.md "micoff's part"). Built-ins are captured first
// (originals.ts); a failure in the bookkeeping is swallowed, never the page's call.
import type { Originals, Realm, Track } from '../common/originals.ts';
import { followMethod, replaceAccessor, replaceMethod } from '../common/originals.ts';

export interface Senders {
  /** The senders whose real track is `track` (micoff's quiet ones excluded). */
  carrying(track: Track): RTCRtpSender[];
  /** Takes the sender off the wire: its real track becomes null, the page still reads `track` (should
   * Firefox refuse, e.g. a connection closing meanwhile, micoff lets go of the sender). */
  quiet(sender: RTCRtpSender, track: Track): void;
  /** Puts the track micoff took back on the sender (no-op when the page has replaced it since). */
  restore(sender: RTCRtpSender): Promise<void>;
  /** The senders micoff holds empty, with the track the page reads on each. */
  quieted(): [RTCRtpSender, Track][];
  /** Called after the page put a track on a sender (addTrack, addTransceiver, replaceTrack). */
  onChange(listener: () => void): void;
}

/** Follows the realm's senders; null when it has no WebRTC. */
export function followSenders(w: Realm, o: Originals): Senders | null {
  const SenderProto = w.RTCRtpSender?.prototype;
  const PcProto = w.RTCPeerConnection?.prototype;
  const { senderTrack, replaceTrack, transceiverSender, signalingState } = o;
  if (!SenderProto || !PcProto || !senderTrack || !replaceTrack || !transceiverSender) return null;
  const apply = Reflect.apply;
  const senderStats = SenderProto.getStats;
  const then = w.Promise.prototype.then;

  /** Senders whose `dtmf` the page read: never held (a read while held puts the track back). */
  const dtmf = new WeakSet<RTCRtpSender>();
  /** Every sender the page put a track on, with its connection when known (null: first seen in
   * replaceTrack, e.g. a transceiver a remote offer made). */
  const senders = new Map<RTCRtpSender, RTCPeerConnection | null>();
  /** The senders micoff holds empty, with the page's track. */
  const held = new Map<RTCRtpSender, Track>();
  /** What `sender.track` reads: while micoff holds the sender empty, and until Firefox has the track
   * back (it sets it in a task of its own after `replaceTrack` resolves its work). */
  const shown = new Map<RTCRtpSender, Track>();
  const letGo = (sender: RTCRtpSender) => {
    held.delete(sender);
    shown.delete(sender);
  };
  const listeners: (() => void)[] = [];
  const changed = () => {
    for (const l of listeners) {
      try {
        l();
      } catch {}
    }
  };
  const closed = (pc: RTCPeerConnection | null) => {
    try {
      return pc !== null && signalingState?.call(pc) === 'closed';
    } catch {
      return false;
    }
  };
  const record = (sender: RTCRtpSender, pc: RTCPeerConnection | null) => {
    for (const [s, p] of senders) if (closed(p) && !held.has(s)) senders.delete(s);
    if (!senders.has(sender) || pc) senders.set(sender, pc);
  };

  replaceAccessor<Track | null>(SenderProto, 'track', (orig) => ({
    get(this: unknown) {
      const page = shown.get(this as RTCRtpSender);
      return page ?? orig.get(this);
    },
  }));
  replaceAccessor<RTCDTMFSender | null>(SenderProto, 'dtmf', (orig) => ({
    get(this: unknown) {
      const sender = this as RTCRtpSender;
      try {
        if (!dtmf.has(sender)) {
          dtmf.add(sender);
          if (held.has(sender)) {
            void api.restore(sender);
            changed();
          }
        }
      } catch {}
      return orig.get(this);
    },
  }));
  replaceMethod(
    SenderProto,
    'replaceTrack',
    (original) =>
      ({
        replaceTrack(this: RTCRtpSender, track: Track | null) {
          // The page's own replacement: micoff lets go of the sender first.
          letGo(this);
          const p = apply(original, this, [track]) as Promise<void>;
          try {
            record(this, null);
            apply(then, p, [changed, () => {}]);
          } catch {}
          return p;
        },
      }).replaceTrack,
  );
  followMethod(PcProto, 'addTrack', (pc, _args, sender) => {
    record(sender as RTCRtpSender, pc);
    changed();
  });
  followMethod(PcProto, 'addTransceiver', (pc, _args, tr) => {
    record(transceiverSender.call(tr as RTCRtpTransceiver), pc);
    changed();
  });
  // The page takes the track off itself: what it reads from now on is Firefox's (null).
  replaceMethod(
    PcProto,
    'removeTrack',
    (original) =>
      ({
        removeTrack(this: RTCPeerConnection, sender: RTCRtpSender) {
          const out = apply(original, this, [sender]);
          letGo(sender);
          return out;
        },
      }).removeTrack,
  );
  replaceMethod(
    PcProto,
    'getStats',
    (original) =>
      ({
        getStats(this: RTCPeerConnection, ...args: unknown[]) {
          const selector = args[0];
          if (selector && senderStats) {
            for (const [s, t] of shown) {
              if (t === selector && senders.get(s) === this) return apply(senderStats, s, []);
            }
          }
          return apply(original, this, args);
        },
      }).getStats,
  );

  const api: Senders = {
    carrying(track) {
      const out: RTCRtpSender[] = [];
      for (const [s, pc] of senders) {
        if (held.has(s) || dtmf.has(s) || closed(pc)) continue;
        if (senderTrack.call(s) === track) out.push(s);
      }
      return out;
    },
    quiet(sender, track) {
      held.set(sender, track);
      shown.set(sender, track);
      const p = apply(replaceTrack, sender, [null]) as Promise<void>;
      apply(then, p, [
        undefined,
        () => {
          if (held.get(sender) === track) letGo(sender);
        },
      ]);
    },
    async restore(sender) {
      const track = held.get(sender);
      if (!track) return;
      held.delete(sender);
      try {
        await (apply(replaceTrack, sender, [track]) as Promise<void>);
        // Firefox reads the track back now; unless the page replaced it meanwhile (then it is gone).
        if (shown.get(sender) === track) shown.delete(sender);
      } catch {
        // A closed connection or a stopped transceiver: the page keeps reading its track, as it would
        // have without micoff.
      }
    },
    quieted: () => [...held],
    onChange(listener) {
      listeners.push(listener);
    },
  };
  return api;
}
