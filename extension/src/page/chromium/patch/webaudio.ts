// WebAudio: a MediaStreamAudioSourceNode on a stream with a managed track is built on a private shadow
// stream; after a reacquire (its tracks dead) an inner node on the fresh tracks is connected wherever
// the page connected its node (connect/disconnect are recorded and replayed). The page reads its own
// stream back from `node.mediaStream`. Every node's connections are also recorded for the audio graph
// (audibility.ts): a source node is a consumer of its stream's tracks; an AnalyserNode, a
// ScriptProcessorNode and an AudioWorkletNode whose port the page touched read audio themselves; the
// speakers hear; a MediaStreamAudioDestinationNode leads on to its own track; an AudioParam is a path
// micoff does not follow (it hears).
import { KEPT } from '../../../shared/release-decision.ts';
import type { Originals, Realm } from '../../common/originals.ts';
import { followMethod, replaceAccessor, replaceConstructor, replaceMethod } from '../../common/originals.ts';
import type { Vertex } from '../graph/audibility.ts';
import { disconnects } from '../graph/audio-connections.ts';
import type { Member, TrackRegistry } from '../track-registry.ts';

interface SourceNodeEntry {
  ctx: BaseAudioContext;
  page: MediaStream;
  /** The node built on the current real tracks after a reacquire (the page's node is on dead ones). */
  inner: AudioNode | null;
  conns: unknown[][];
}

export function patchWebAudio(w: Realm, o: Originals, reg: TrackRegistry): void {
  const sourceNodes = new Map<AudioNode, SourceNodeEntry>();
  /** Every source node on a stream (managed or not) -> the page's stream, for the graph. */
  const sources = new Map<AudioNode, { ctx: BaseAudioContext; page: MediaStream }>();
  const outs = new WeakMap<AudioNode, unknown[][]>();
  const portUsed = new WeakSet<AudioNode>();
  reg.onPrune(() => {
    for (const [node, e] of sourceNodes) {
      if (e.ctx.state === 'closed' || !reg.liveIn(e.page)) sourceNodes.delete(node);
    }
    for (const [node, e] of sources) if (e.ctx.state === 'closed') sources.delete(node);
  });

  const AudioNodeC = w.AudioNode;
  const is = <T>(C: (abstract new (...a: never[]) => T) | null, v: unknown): v is T => !!C && v instanceof C;
  function nodeVertex(node: AudioNode): Vertex {
    let reads: string | null = null;
    if (is(o.AnalyserNode, node)) reads = KEPT.analyser;
    else if (is(o.ScriptProcessorNode, node)) reads = KEPT.worklet;
    else if (is(o.AudioWorkletNode, node) && portUsed.has(node)) reads = KEPT.worklet;
    return {
      kind: 'node',
      key: node,
      reads,
      next() {
        const out: Vertex[] = [];
        for (const [target] of outs.get(node) ?? []) {
          if (is(o.AudioDestinationNode, target)) out.push({ kind: 'sink', why: KEPT.speakers });
          else if (is(o.MediaStreamAudioDestinationNode, target)) {
            const stream = o.destinationStream?.call(target);
            const tracks = stream ? o.getTracks.call(stream) : [];
            out.push({ kind: 'node', key: target, reads: null, next: () => tracks.map(reg.trackVertex) });
          } else if (AudioNodeC && target instanceof AudioNodeC) out.push(nodeVertex(target));
          else out.push({ kind: 'sink', why: KEPT.unseen }); // an AudioParam: modulation we do not follow
        }
        return out;
      },
    };
  }
  reg.addConsumers((t) => {
    const out: Vertex[] = [];
    for (const [node, e] of sources) {
      if (e.ctx.state === 'closed' || !o.getTracks.call(e.page).includes(t)) continue;
      out.push(nodeVertex(node));
    }
    return out;
  });
  const noteSource = (ctx: BaseAudioContext, page: unknown, node: AudioNode): void => {
    if (!(page instanceof o.MediaStream)) return;
    sources.set(node, { ctx, page });
    for (const t of o.getTracks.call(page)) reg.markSeen(t);
    reg.evaluateAll();
  };
  replaceAccessor<MessagePort>(w.AudioWorkletNode?.prototype, 'port', (orig) => ({
    get(this: unknown) {
      if (!portUsed.has(this as AudioNode)) {
        portUsed.add(this as AudioNode);
        reg.evaluateAll();
      }
      return orig.get(this);
    },
  }));
  reg.onSwapped((swapped: Member[]) => {
    for (const e of sourceNodes.values()) {
      if (!reg.managedIn(e.page).some((m) => swapped.includes(m))) continue;
      try {
        const inner = o.createMediaStreamSource?.call(e.ctx as AudioContext, reg.makeShadow(e.page));
        if (!inner) continue;
        for (const c of e.conns) o.connect?.apply(inner, c);
        if (e.inner) o.disconnect?.call(e.inner);
        e.inner = inner;
      } catch {} // a closed context: nothing to feed
    }
  });
  const track = (ctx: BaseAudioContext, page: MediaStream, node: AudioNode): AudioNode => {
    sourceNodes.set(node, { ctx, page, inner: null, conns: [] });
    return node;
  };

  replaceMethod(
    w.AudioContext?.prototype,
    'createMediaStreamSource',
    (original) =>
      ({
        createMediaStreamSource(this: AudioContext, s: MediaStream) {
          if (!(s instanceof o.MediaStream) || reg.managedIn(s).length === 0) {
            const node = original.call(this, s);
            noteSource(this, s, node);
            return node;
          }
          const node = track(this, s, original.call(this, reg.makeShadow(s)));
          noteSource(this, s, node);
          return node as MediaStreamAudioSourceNode;
        },
      }).createMediaStreamSource,
  );
  if (w.MediaStreamAudioSourceNode) {
    replaceConstructor<typeof MediaStreamAudioSourceNode>(w, 'MediaStreamAudioSourceNode', (O, a, nt) => {
      const [ctx, init] = a as [BaseAudioContext, MediaStreamAudioSourceOptions];
      const s = init?.mediaStream;
      if (!(s instanceof o.MediaStream) || reg.managedIn(s).length === 0) {
        const node = o.construct(O, a, nt) as AudioNode;
        noteSource(ctx, s, node);
        return node;
      }
      const node = o.construct(O, [ctx, { ...init, mediaStream: reg.makeShadow(s) }], nt) as AudioNode;
      noteSource(ctx, s, node);
      return track(ctx, s, node);
    });
    replaceAccessor<MediaStream>(w.MediaStreamAudioSourceNode.prototype, 'mediaStream', () => ({
      get(this: unknown) {
        const e = sourceNodes.get(this as AudioNode);
        return e ? e.page : (o.sourceNodeStream?.call(this as MediaStreamAudioSourceNode) as MediaStream);
      },
    }));
  }
  // The page's connections, recorded: replayed on a source node's inner node after a reacquire
  // (through the original connect / disconnect), and kept as every node's edges for the graph.
  const NodeProto = w.AudioNode?.prototype;
  followMethod(NodeProto, 'connect', (node, args) => {
    const e = sourceNodes.get(node);
    if (e) {
      e.conns.push(args);
      if (e.inner) o.connect?.apply(e.inner, args);
    }
    const list = outs.get(node) ?? [];
    list.push(args);
    outs.set(node, list);
    reg.evaluateAll();
  });
  followMethod(NodeProto, 'disconnect', (node, args) => {
    const e = sourceNodes.get(node);
    if (e) {
      e.conns = e.conns.filter((c) => !disconnects(args, c));
      try {
        if (e.inner) o.disconnect?.apply(e.inner, args);
      } catch {}
    }
    const list = outs.get(node);
    if (list) {
      outs.set(
        node,
        list.filter((c) => !disconnects(args, c)),
      );
      reg.evaluateAll();
    }
  });
}
