// While a device is released, each sender that carried it sends silence from a stand-in track, as a
// muted sender does: a released device gives Chromium's sender no frames, so no RTP, and a far end that
// watches for packets (Janus's no-media timer) tells the page "not receiving your audio"
// (docs/design/release-on-mute.md "Far ends that watch the packets"). The stand-in is one silent
// WebAudio graph per realm that renders into no device (`sinkId: none`), each sender a clone of its
// track; the graph closes with the last stand-in. The RTP clock runs on through it, so a sender that
// carried one needs no restart at the unmute.
import type { Originals, Track } from '../../common/originals.ts';

/** The render buffer: Chromium's 'playback' hint renders 1024 frames at a time (about 47 wakes a
 * second against 100 for 'interactive'); the packets still leave every frame, 20 ms. */
const LATENCY_HINT: AudioContextLatencyCategory = 'playback';

export interface SenderStandIns {
  /** Puts a silent track on `sender` (which carries the device's track the release stopped); the
   * track is recorded as standing for `page`'s member (`alias`). False when this realm cannot make one. */
  cover(sender: RTCRtpSender, alias: (t: Track) => void): boolean;
  /** The stand-in `sender` carries, if micoff put one there and it is still there. */
  on(sender: RTCRtpSender): Track | null;
  /** `sender` no longer needs its stand-in (a fresh track went in, or the page moved it). */
  drop(sender: RTCRtpSender): void;
  /** Drops the stand-ins the page took off their senders (replaceTrack, removeTrack). */
  prune(): void;
  /** How many senders carry one (tests, reports). */
  size(): number;
}

export function createSenderStandIns(o: Originals): SenderStandIns {
  const bySender = new Map<RTCRtpSender, Track>();
  let graph: { ctx: AudioContext; track: Track } | null = null;

  const open = (): { ctx: AudioContext; track: Track } | null => {
    if (graph) return graph;
    const { AudioContext, ConstantSourceNode, MediaStreamAudioDestinationNode, destinationStream } = o;
    if (!AudioContext || !ConstantSourceNode || !MediaStreamAudioDestinationNode || !destinationStream)
      return null;
    if (!o.connect || !o.startSource) return null;
    try {
      const ctx = new AudioContext({
        latencyHint: LATENCY_HINT,
        sampleRate: 48_000,
        sinkId: { type: 'none' },
      } as AudioContextOptions);
      const source = new ConstantSourceNode(ctx, { offset: 0 });
      const dest = new MediaStreamAudioDestinationNode(ctx, { channelCount: 1 });
      o.connect.call(source, dest);
      o.startSource.call(source);
      // Started without a gesture of its own: the page's (a call joined by a click) lets it run.
      o.resumeContext?.call(ctx).catch(() => {});
      const track = o.getAudioTracks.call(destinationStream.call(dest))[0];
      if (!track) {
        o.closeContext?.call(ctx).catch(() => {});
        return null;
      }
      graph = { ctx, track };
      return graph;
    } catch {
      return null;
    }
  };
  const closeIfUnused = () => {
    if (bySender.size > 0 || !graph) return;
    o.stop.call(graph.track);
    o.closeContext?.call(graph.ctx).catch(() => {});
    graph = null;
  };

  const drop = (sender: RTCRtpSender) => {
    const t = bySender.get(sender);
    if (!t) return;
    bySender.delete(sender);
    o.stop.call(t);
    closeIfUnused();
  };

  return {
    cover(sender, alias) {
      if (!o.replaceTrack || bySender.has(sender)) return bySender.has(sender);
      const g = open();
      if (!g) return false;
      const t = o.clone.call(g.track);
      alias(t);
      bySender.set(sender, t);
      o.replaceTrack.call(sender, t).catch(() => {
        if (bySender.get(sender) === t) drop(sender);
      });
      return true;
    },
    on(sender) {
      const t = bySender.get(sender);
      return t && o.senderTrack?.call(sender) === t ? t : null;
    },
    drop,
    prune() {
      for (const [s, t] of [...bySender]) if (o.senderTrack?.call(s) !== t) drop(s);
    },
    size: () => bySender.size,
  };
}
