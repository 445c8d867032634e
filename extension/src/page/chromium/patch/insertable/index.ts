// Insertable streams (MediaStreamTrackProcessor -> page code -> MediaStreamTrackGenerator): the page's
// processor on a managed track is built on a micoff-owned stand-in (stand-ins.ts), so a release never
// reaches it; and its frames are followed (frame-paths.ts) through pipeThrough / pipeTo and postMessage
// to generators, which carry the path on (audibility.ts). A processor whose frames go anywhere else
// hears: the device is kept open, with a reason (docs/design/release-on-mute.md "Insertable-streams
// pipelines"). patchInsertable wires the steps below, one per surface the page uses.
import type { Originals, Realm, Track } from '../../../common/originals.ts';
import { replaceAccessor, replaceConstructor, replaceMethod } from '../../../common/originals.ts';
import type { TrackRegistry } from '../../track-registry.ts';
import { createFramePaths, type FramePaths } from './frame-paths.ts';
import { createStandIns, type StandIns } from './stand-ins.ts';

type AnyFn = (this: unknown, ...a: unknown[]) => unknown;

export function patchInsertable(w: Realm, o: Originals, reg: TrackRegistry): void {
  const paths = createFramePaths(o, reg, w.MediaStreamTrack);
  const standIns = createStandIns(o, reg, () => [...paths.processors].map((p) => p.track));
  if (o.TrackProcessor) patchProcessor(w, o, reg, paths, standIns);
  patchGeneratorWritable(w, o, paths);
  patchPipes(w, paths);
  patchTransfers(w, paths);
}

/** `new MediaStreamTrackProcessor(...)` on a managed track reads the member's stand-in; every audio
 * processor is recorded with the track the page gave it. */
export function patchProcessor(
  w: Realm,
  o: Originals,
  reg: TrackRegistry,
  paths: FramePaths,
  standIns: StandIns,
): void {
  const TrackC = w.MediaStreamTrack;
  replaceConstructor(w, 'MediaStreamTrackProcessor', (Original, args, newTarget) => {
    // Chromium takes `({track, maxBufferSize})` and the older `(track, bufferSize)`.
    const [first, ...rest] = args;
    const positional = first instanceof TrackC;
    const t = positional ? first : (first as { track?: unknown } | null | undefined)?.track;
    const m = t instanceof TrackC ? reg.members.get(t as Track) : undefined;
    let standIn: Track | null = null;
    if (m) {
      try {
        standIn = standIns.standInFor(m);
      } catch {}
    }
    let built = args;
    if (standIn)
      built = positional ? [standIn, ...rest] : [{ ...(first as object), track: standIn }, ...rest];
    const out = o.construct(Original as never, built, newTarget) as object;
    if (t instanceof TrackC) {
      try {
        const readable = o.processorReadable?.call(out);
        if (readable) paths.addProcessor(t as Track, readable);
        reg.markSeen(t as Track);
        reg.evaluateAll();
      } catch {}
    }
    return out;
  });
}

/** A page generator's `writable`, once read, names the generator its frames come out of. */
export function patchGeneratorWritable(w: Realm, o: Originals, paths: FramePaths): void {
  const GenProto = (w as unknown as { MediaStreamTrackGenerator?: { prototype: object } })
    .MediaStreamTrackGenerator?.prototype;
  replaceAccessor<WritableStream>(GenProto, 'writable', (orig) => ({
    get(this: unknown) {
      const writable = orig.get(this);
      try {
        if (writable && o.kind.call(this as Track) === 'audio' && paths.addGenerator(writable, this as Track))
          paths.changed();
      } catch {}
      return writable;
    },
  }));
}

/** pipeTo links a readable to a writable until the pipe settles; pipeThrough links it to the readable
 * it returns. */
export function patchPipes(w: Realm, paths: FramePaths): void {
  const RSProto = w.ReadableStream?.prototype;
  replaceMethod(RSProto, 'pipeTo', (original) => {
    const { pipeTo } = {
      pipeTo(this: ReadableStream, dest: WritableStream, options?: StreamPipeOptions) {
        const p = (original as unknown as AnyFn).call(this, dest, options) as Promise<void>;
        try {
          if (dest && typeof dest === 'object') {
            paths.links.link(this, dest);
            const done = () => {
              paths.links.unlink(this, dest);
              paths.changed();
            };
            p.then(done, done);
            paths.changed();
          }
        } catch {}
        return p;
      },
    };
    return pipeTo as ReadableStream['pipeTo'];
  });
  replaceMethod(RSProto, 'pipeThrough', (original) => {
    const { pipeThrough } = {
      pipeThrough(this: ReadableStream, transform: ReadableWritablePair, options?: StreamPipeOptions) {
        const out = (original as unknown as AnyFn).call(this, transform, options) as ReadableStream;
        try {
          if (out && typeof out === 'object') {
            paths.links.link(this, out);
            paths.changed();
          }
        } catch {}
        return out;
      },
    };
    return pipeThrough as ReadableStream['pipeThrough'];
  });
}

/** Worker and MessagePort postMessage: what they transfer (frame-paths.ts noteTransfer). */
export function patchTransfers(w: Realm, paths: FramePaths): void {
  for (const proto of [w.Worker?.prototype, w.MessagePort?.prototype]) {
    replaceMethod(proto as { postMessage: AnyFn } | undefined, 'postMessage', (original) => {
      const { postMessage } = {
        postMessage(this: unknown, ...args: unknown[]) {
          const out = original.apply(this, args);
          try {
            paths.noteTransfer(args[1]);
          } catch {}
          return out;
        },
      };
      return postMessage;
    });
  }
}
