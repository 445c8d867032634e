// WebAudio: a MediaStreamAudioSourceNode on a stream with a managed track is built on a private shadow
// stream; after a reacquire (its tracks dead) an inner node on the fresh tracks is connected wherever
// the page connected its node (connect/disconnect are recorded and replayed). The page reads its own
// stream back from `node.mediaStream`.
import { disconnects } from '../audio-connections.ts';
import { replaceAccessor, replaceConstructor, replaceMethod } from '../natives.ts';
import type { Originals, Realm } from '../originals.ts';
import type { Member, TrackRegistry } from '../track-registry.ts';

interface SourceNodeEntry {
  ctx: BaseAudioContext;
  page: MediaStream;
  /** The node built on the current real tracks after a reacquire (the page's node is on dead ones). */
  inner: AudioNode | null;
  conns: unknown[][];
}

type AnyFn = (this: unknown, ...a: unknown[]) => unknown;

export function patchWebAudio(w: Realm, o: Originals, reg: TrackRegistry): void {
  const sourceNodes = new Map<AudioNode, SourceNodeEntry>();
  reg.onPrune(() => {
    for (const [node, e] of sourceNodes) {
      if (e.ctx.state === 'closed' || !reg.liveIn(e.page)) sourceNodes.delete(node);
    }
  });
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
          if (!(s instanceof o.MediaStream) || reg.managedIn(s).length === 0) return original.call(this, s);
          return track(this, s, original.call(this, reg.makeShadow(s))) as MediaStreamAudioSourceNode;
        },
      }).createMediaStreamSource,
  );
  if (w.MediaStreamAudioSourceNode) {
    replaceConstructor<typeof MediaStreamAudioSourceNode>(w, 'MediaStreamAudioSourceNode', (O, a, nt) => {
      const [ctx, init] = a as [BaseAudioContext, MediaStreamAudioSourceOptions];
      const s = init?.mediaStream;
      if (!(s instanceof o.MediaStream) || reg.managedIn(s).length === 0) return o.construct(O, a, nt);
      const node = o.construct(O, [ctx, { ...init, mediaStream: reg.makeShadow(s) }], nt) as AudioNode;
      return track(ctx, s, node);
    });
    replaceAccessor<MediaStream>(w.MediaStreamAudioSourceNode.prototype, 'mediaStream', () => ({
      get(this: unknown) {
        const e = sourceNodes.get(this as AudioNode);
        return e ? e.page : (o.sourceNodeStream?.call(this as MediaStreamAudioSourceNode) as MediaStream);
      },
    }));
  }
  // Method shorthand, like every replacement: not constructible and without a `prototype`, as natives.
  const NodeProto = w.AudioNode?.prototype;
  replaceMethod(NodeProto, 'connect', (original) => {
    const { connect } = {
      connect(this: AudioNode, ...args: unknown[]) {
        const out = (original as AnyFn).apply(this, args);
        const e = sourceNodes.get(this);
        if (e) {
          e.conns.push(args);
          if (e.inner) (original as AnyFn).apply(e.inner, args);
        }
        return out;
      },
    };
    return connect as unknown as AudioNode['connect'];
  });
  replaceMethod(NodeProto, 'disconnect', (original) => {
    const { disconnect } = {
      disconnect(this: AudioNode, ...args: unknown[]) {
        const out = (original as AnyFn).apply(this, args);
        const e = sourceNodes.get(this);
        if (e) {
          e.conns = e.conns.filter((c) => !disconnects(args, c));
          try {
            if (e.inner) (original as AnyFn).apply(e.inner, args);
          } catch {}
        }
        return out;
      },
    };
    return disconnect as unknown as AudioNode['disconnect'];
  });
}
