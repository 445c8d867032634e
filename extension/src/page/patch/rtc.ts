// RTCPeerConnection / RTCRtpSender: senders carry the real track (swapped on reacquire by
// track-registry.ts swapIn); the page reads its own track back from `sender.track`.
import { replaceAccessor, replaceMethod } from '../natives.ts';
import type { Originals, Realm, Track } from '../originals.ts';
import type { TrackRegistry } from '../track-registry.ts';

export function patchRtc(w: Realm, _o: Originals, reg: TrackRegistry): void {
  const { members } = reg;
  const SenderProto = w.RTCRtpSender?.prototype;
  const PcProto = w.RTCPeerConnection?.prototype;
  const attach = (sender: RTCRtpSender, track: Track | null) => {
    for (const g of reg.groups.values()) for (const m of g.members) m.senders.delete(sender);
    const m = track ? members.get(track) : undefined;
    m?.senders.add(sender);
  };
  replaceAccessor<Track | null>(SenderProto, 'track', (orig) => ({
    get(this: unknown) {
      const t = orig.get(this);
      return (t && reg.byReal.get(t)?.page) || t;
    },
  }));
  replaceMethod(
    SenderProto,
    'replaceTrack',
    (original) =>
      ({
        replaceTrack(this: RTCRtpSender, track: Track | null) {
          const m = track ? members.get(track) : undefined;
          const p = original.call(this, m ? m.real : track);
          p.then(() => attach(this, track)).catch(() => {});
          return p;
        },
      }).replaceTrack,
  );
  replaceMethod(
    PcProto,
    'addTrack',
    (original) =>
      ({
        addTrack(this: RTCPeerConnection, track: Track, ...streams: MediaStream[]) {
          const m = members.get(track);
          const sender = original.call(this, m ? m.real : track, ...streams);
          if (m) attach(sender, track);
          return sender;
        },
      }).addTrack,
  );
  replaceMethod(
    PcProto,
    'addTransceiver',
    (original) =>
      ({
        addTransceiver(this: RTCPeerConnection, what: Track | string, init?: RTCRtpTransceiverInit) {
          const m = typeof what === 'string' ? undefined : members.get(what);
          const tr = original.call(this, m ? m.real : what, init);
          if (m) attach(tr.sender, what as Track);
          return tr;
        },
      }).addTransceiver,
  );
}
