// The fake realm's WebRTC: senders (the real `track` getter, replaceTrack, parameters with Chromium's
// transaction ids), transceivers (sender, direction), peer connections.
import { accessor, define } from './accessors.test-util.ts';
import type { Media } from './media.test-util.ts';

type FakeTrack = InstanceType<Media['FakeTrack']>;
type FakeStream = InstanceType<Media['FakeStream']>;

export function fakeRtc() {
  class FakeSender {
    declare readonly track: FakeTrack | null;
    _track: FakeTrack | null;
    _encodings: { active: boolean }[] = [{ active: true }];
    _txn = 0;
    _lastTxn: string | null = null;
    /** Each successful setParameters: the encodings' `active`. */
    _sets: boolean[][] = [];
    /** Each replaceTrack's track. */
    _replaced: (FakeTrack | null)[] = [];
    /** Set: replaceTrack rejects with it (a closed connection, a stopped transceiver). */
    _refuse: Error | null = null;
    constructor(track: FakeTrack | null) {
      this._track = track;
    }
    replaceTrack(t: FakeTrack | null): Promise<void> {
      if (this._refuse) return Promise.reject(this._refuse);
      this._track = t;
      this._replaced.push(t);
      return Promise.resolve();
    }
    getParameters() {
      this._lastTxn = String(++this._txn);
      return { transactionId: this._lastTxn, encodings: this._encodings.map((e) => ({ ...e })) };
    }
    /** The sender's statistics: a marker naming it (the fake has no real ones). */
    getStats(): Promise<Map<string, unknown>> {
      return Promise.resolve(new Map([['sender', this]]));
    }
    setParameters(p: { transactionId: string; encodings: { active?: boolean }[] }): Promise<void> {
      if (p.transactionId !== this._lastTxn) return Promise.reject(new Error('InvalidModificationError'));
      this._lastTxn = null;
      this._encodings = p.encodings.map((e) => ({ active: e.active !== false }));
      this._sets.push(this._encodings.map((e) => e.active));
      return Promise.resolve();
    }
  }
  /** Firefox's DTMF sender: it can insert tones only while its sender has a track. */
  const dtmfOf = new WeakMap<FakeSender, { readonly canInsertDTMF: boolean }>();
  define(FakeSender, {
    track: accessor(function (this: FakeSender) {
      return this._track;
    }),
    dtmf: accessor(function (this: FakeSender) {
      let d = dtmfOf.get(this);
      if (!d) {
        const sender = this;
        d = {
          get canInsertDTMF() {
            return sender._track !== null;
          },
        };
        dtmfOf.set(this, d);
      }
      return d;
    }),
  });
  class FakeTransceiver {
    declare readonly sender: FakeSender;
    declare direction: RTCRtpTransceiverDirection;
    constructor(
      readonly _sender: FakeSender,
      public _direction: RTCRtpTransceiverDirection = 'sendrecv',
    ) {}
    stop(): void {
      this._direction = 'stopped';
    }
  }
  define(FakeTransceiver, {
    sender: accessor(function (this: FakeTransceiver) {
      return this._sender;
    }),
    direction: accessor(
      function (this: FakeTransceiver) {
        return this._direction;
      },
      function (this: FakeTransceiver, v: RTCRtpTransceiverDirection) {
        this._direction = v;
      },
    ),
  });
  class FakePeerConnection {
    _transceivers: FakeTransceiver[] = [];
    _signaling: RTCSignalingState = 'stable';
    addTrack(t: FakeTrack, ..._streams: FakeStream[]): FakeSender {
      const s = new FakeSender(t);
      this._transceivers.push(new FakeTransceiver(s));
      return s;
    }
    addTransceiver(what: FakeTrack | string, init?: { direction?: RTCRtpTransceiverDirection }) {
      const tr = new FakeTransceiver(new FakeSender(typeof what === 'string' ? null : what), init?.direction);
      this._transceivers.push(tr);
      return tr;
    }
    removeTrack(sender: FakeSender): void {
      sender._track = null;
    }
    close(): void {
      this._signaling = 'closed';
    }
    getTransceivers(): FakeTransceiver[] {
      return [...this._transceivers];
    }
    /** Firefox's rule for a selector: the sender whose current track it is, else a rejection. */
    getStats(selector?: FakeTrack | null): Promise<Map<string, unknown>> {
      if (!selector) return Promise.resolve(new Map([['connection', this]]));
      const tr = this._transceivers.find((t) => t._sender._track === selector);
      return tr ? tr._sender.getStats() : Promise.reject(new Error('InvalidAccessError'));
    }
  }
  define(FakePeerConnection, {
    signalingState: accessor(function (this: FakePeerConnection) {
      return this._signaling;
    }),
  });

  return { FakeSender, FakeTransceiver, FakePeerConnection };
}
