// RTCPeerConnection / RTCRtpSender: senders carry the real track (swapped on reacquire by
// track-registry.ts swapIn); the page reads its own track back from `sender.track`. Every sender the
// page gives a track is recorded for the audio graph (audibility.ts): a sender sends while its
// connection is open, its transceiver's direction sends and some encoding is active; what changes that
// (direction, setParameters, replaceTrack, removeTrack, stop, close) makes the devices decide again.
// A sender left without frames by a release has its RTP stream restarted at the reacquire (`restart`),
// so the far end's jitter buffer does not take the pause for network delay.
import { KEPT } from '../../../shared/release-decision.ts';
import type { Originals, Realm, Track } from '../../common/originals.ts';
import { followMethod, replaceAccessor, replaceMethod } from '../../common/originals.ts';
import type { Vertex } from '../graph/audibility.ts';
import { createSenderParams } from '../graph/sender-params.ts';
import type { TrackRegistry } from '../track-registry.ts';

interface SenderEntry {
  /** Null for a sender first seen in replaceTrack (e.g. one a remote offer made): its direction is
   * unknown, so it counts as sending unless its encodings say otherwise. */
  pc: RTCPeerConnection | null;
  transceiver: RTCRtpTransceiver | null;
}

const paramsOf = (get: RTCRtpSender['getParameters'], set: RTCRtpSender['setParameters']) =>
  createSenderParams<RTCRtpSender, RTCRtpSendParameters>({
    get: (s) => get.call(s),
    set: (s, p) => set.call(s, p),
  });

export function patchRtc(w: Realm, o: Originals, reg: TrackRegistry): void {
  const { members } = reg;
  const SenderProto = w.RTCRtpSender?.prototype;
  const PcProto = w.RTCPeerConnection?.prototype;
  const senders = new Map<RTCRtpSender, SenderEntry>();
  // micoff's reads of the parameters, the page's view of them and the restart after a release.
  const params = o.getParameters && o.setParameters ? paramsOf(o.getParameters, o.setParameters) : null;

  const transceiverOf = (pc: RTCPeerConnection, sender: RTCRtpSender): RTCRtpTransceiver | null => {
    if (!o.getTransceivers || !o.transceiverSender) return null;
    for (const t of o.getTransceivers.call(pc)) if (o.transceiverSender.call(t) === sender) return t;
    return null;
  };
  const record = (pc: RTCPeerConnection, sender: RTCRtpSender, tr?: RTCRtpTransceiver) => {
    reg.addConnection(pc);
    if (!senders.has(sender)) senders.set(sender, { pc, transceiver: tr ?? transceiverOf(pc, sender) });
  };
  /** Does the sender put anything on the wire? Unreadable state counts as sending. */
  const sending = (sender: RTCRtpSender, e: SenderEntry): boolean => {
    try {
      if (e.pc && o.signalingState?.call(e.pc) === 'closed') return false;
      const dir = e.transceiver ? o.transceiverDirection?.call(e.transceiver) : undefined;
      if (dir === 'inactive' || dir === 'recvonly' || dir === 'stopped') return false;
      const active = params?.active(sender) ?? [];
      if (active.length > 0 && active.every((a) => !a)) return false;
    } catch {}
    return true;
  };
  reg.addConsumers((t) => {
    const out: Vertex[] = [];
    for (const [s, e] of senders) {
      const carried = o.senderTrack?.call(s);
      if (!carried || (reg.byReal.get(carried)?.page ?? carried) !== t) continue;
      // A sender that sent a stand-in's silence kept its RTP clock running: nothing to restart.
      const restart = params && !reg.standInOn(s) ? () => params.restart(s) : undefined;
      out.push({ kind: 'sender', sending: sending(s, e), why: KEPT.sending, restart });
    }
    return out;
  });
  reg.onPrune(() => {
    for (const [s, e] of senders) if (e.pc && o.signalingState?.call(e.pc) === 'closed') senders.delete(s);
  });

  const attach = (sender: RTCRtpSender, track: Track | null) => {
    for (const g of reg.groups.values()) for (const m of g.members) m.senders.delete(sender);
    const m = track ? members.get(track) : undefined;
    m?.senders.add(sender);
    if (track) reg.markSeen(track);
  };
  const after = <T>(p: Promise<T>): Promise<T> => {
    p.then(reg.evaluateAll, reg.evaluateAll);
    return p;
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
          if (!senders.has(this)) senders.set(this, { pc: null, transceiver: null });
          p.then(() => {
            attach(this, track);
            reg.pruneStandIns();
            reg.evaluateAll();
          }).catch(() => {});
          return p;
        },
      }).replaceTrack,
  );
  if (params) {
    replaceMethod(
      SenderProto,
      'getParameters',
      () =>
        ({
          getParameters(this: RTCRtpSender) {
            return params.pageGet(this);
          },
        }).getParameters,
    );
  }
  replaceMethod(
    SenderProto,
    'setParameters',
    (original) =>
      ({
        setParameters(this: RTCRtpSender, ...a: Parameters<RTCRtpSender['setParameters']>) {
          let args = a;
          try {
            if (params) args = [params.pageSet(this, a[0]), ...a.slice(1)] as typeof a;
          } catch {}
          return after(original.apply(this, args));
        },
      }).setParameters,
  );
  replaceAccessor<RTCRtpTransceiverDirection>(w.RTCRtpTransceiver?.prototype, 'direction', (orig) => ({
    get(this: unknown) {
      return orig.get(this);
    },
    set(this: unknown, v: RTCRtpTransceiverDirection) {
      orig.set?.(this, v);
      reg.evaluateAll();
    },
  }));
  followMethod(w.RTCRtpTransceiver?.prototype, 'stop', reg.evaluateAll);
  replaceMethod(
    PcProto,
    'addTrack',
    (original) =>
      ({
        addTrack(this: RTCPeerConnection, track: Track, ...streams: MediaStream[]) {
          const m = members.get(track);
          const sender = original.call(this, m ? m.real : track, ...streams);
          try {
            record(this, sender);
            attach(sender, track);
            reg.evaluateAll();
          } catch {}
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
          try {
            record(this, tr.sender, tr);
            if (typeof what !== 'string') attach(tr.sender, what);
            reg.evaluateAll();
          } catch {}
          return tr;
        },
      }).addTransceiver,
  );
  // Every connection that receives (a remote description) plays the far end: what echo-guard.ts reads.
  followMethod(PcProto, 'setRemoteDescription', (pc) => reg.addConnection(pc));
  followMethod(PcProto, 'removeTrack', reg.evaluateAll);
  followMethod(PcProto, 'close', reg.evaluateAll);
}
