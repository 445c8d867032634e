// Insertable streams: MediaStreamTrackProcessor -> transform (page code, often in a worker) ->
// MediaStreamTrackGenerator. Two things:
//   - The page's processor on a managed track is built on a micoff-owned stand-in (a generator), fed by
//     a native pipe from a processor of micoff's own on the real track. A release stops the real track,
//     which ends only that pipe; a reacquire pipes a processor on the fresh track into the same stand-in.
//     The page's processor, its readable and whatever reads it (a worker) never see the device go. This
//     costs one extra hop per 10 ms frame while the processor exists (docs/design/release-on-mute.md,
//     "Insertable-streams pipelines"), so it is only built where the page builds a processor itself.
//   - Where the processor's frames go (stream-links.ts): pipeThrough / pipeTo chains in the page and a
//     postMessage transferring readables and writables together to a worker lead from the processor's
//     readable to generators' writables. The processor passes the path on to those generators' tracks
//     (audibility.ts): disabled, or on senders sending nothing, the path is silenced. A processor whose
//     frames go anywhere else (page code reading them) hears: the device is kept open, with a reason.
import { KEPT } from '../../shared/release-decision.ts';
import type { Vertex } from '../audibility.ts';
import { replaceAccessor, replaceConstructor, replaceMethod } from '../natives.ts';
import type { Originals, Realm, Track } from '../originals.ts';
import { createStreamLinks } from '../stream-links.ts';
import type { Member, TrackRegistry } from '../track-registry.ts';

/** A stand-in behind the page's processors on one member, and the pipe that feeds it. */
interface Feed {
  member: Member;
  standIn: Track;
  writable: WritableStream;
  /** The real track piped in (null: none yet). */
  real: Track | null;
  abort: AbortController | null;
  /** Settles once the current pipe has let go of the stand-in's writable. */
  idle: Promise<void>;
}

/** A processor the page built, on the (page-visible) track it reads. */
interface ProcessorEntry {
  track: Track;
  readable: ReadableStream;
}

type AnyFn = (this: unknown, ...a: unknown[]) => unknown;

export function patchInsertable(w: Realm, o: Originals, reg: TrackRegistry): void {
  const links = createStreamLinks();
  const generatorOf = new WeakMap<object, Track>(); // a page generator's writable -> the generator
  const processors = new Set<ProcessorEntry>();
  const feeds = new Map<Member, Feed>();
  /** Tracks transferred to a worker or another realm: read by code micoff cannot see. */
  const transferred = new WeakSet<Track>();
  const TrackC = w.MediaStreamTrack;
  const changed = () => {
    if (processors.size > 0) reg.evaluateAll();
  };

  const generators = new Set<Track>(); // the page's audio generators (their writables were handed out)

  const processorVertex = (p: ProcessorEntry): Vertex => ({
    kind: 'node',
    key: p,
    reads: null,
    next() {
      const { ends, open } = links.follow(p.readable, (s) => generatorOf.get(s) ?? null);
      const out: Vertex[] = [];
      if (open || ends.length === 0) {
        out.push({ kind: 'sink', why: KEPT.processor });
        // Frames that go where micoff cannot see most likely still end in one of the page's generators.
        // Followed for the report only (the processor already hears): muted there, the popup says the
        // page is muted yet processes the microphone in its own code, rather than "microphone on".
        for (const g of generators) if (!ends.includes(g)) out.push(reg.trackVertex(g));
      }
      for (const g of ends) out.push(reg.trackVertex(g));
      return out;
    },
    // The generators get frames only through this processor (fed by the stand-in): none while released.
    relayed() {
      const { ends, open } = links.follow(p.readable, (s) => generatorOf.get(s) ?? null);
      return open ? [] : ends.map((g) => reg.trackVertex(g));
    },
  });
  reg.addConsumers((t) => {
    const out: Vertex[] = [];
    for (const p of processors) if (p.track === t) out.push(processorVertex(p));
    if (transferred.has(t)) out.push({ kind: 'sink', why: KEPT.unseen });
    return out;
  });
  reg.onPrune(() => {
    for (const p of processors) {
      const m = reg.members.get(p.track);
      if (m ? m.ended : o.isEnded(p.track)) processors.delete(p);
    }
    for (const g of generators) if (o.isEnded(g)) generators.delete(g);
  });

  // ---- stand-ins ---------------------------------------------------------------------------------------
  const { TrackGenerator, TrackProcessor, pipeTo, AbortController: Abort } = o;
  const { generatorWritable, processorReadable } = o;
  const canStandIn = !!(
    TrackGenerator &&
    TrackProcessor &&
    pipeTo &&
    Abort &&
    generatorWritable &&
    processorReadable
  );
  const PIPE = { preventClose: true, preventAbort: true, preventCancel: true };

  /** Pipe the member's current real track into its stand-in, once the previous pipe let go of it. */
  function feed(f: Feed): void {
    const real = f.member.real;
    if (!canStandIn || f.member.ended || f.real === real || o.isEnded(real)) return;
    f.abort?.abort();
    const abort = new (Abort as typeof AbortController)();
    f.real = real;
    f.abort = abort;
    f.idle = f.idle
      .then(() => {
        if (f.abort !== abort || o.isEnded(real)) return;
        const proc = new (TrackProcessor as NonNullable<Originals['TrackProcessor']>)({ track: real });
        const readable = (processorReadable as NonNullable<Originals['processorReadable']>).call(proc);
        const pipe = (pipeTo as NonNullable<Originals['pipeTo']>).call(readable, f.writable, {
          ...PIPE,
          signal: abort.signal,
        });
        // The pipe ends when the real track stops (a release) or when it is aborted (a swap, the end):
        // micoff's processor lets go of the track either way.
        return pipe.then(
          () => {},
          () => {
            o.cancel?.call(readable).catch(() => {});
          },
        );
      })
      .catch(() => {});
  }

  function standInFor(m: Member): Track | null {
    if (!canStandIn || m.ended) return null;
    let f = feeds.get(m);
    if (!f) {
      const standIn = new (TrackGenerator as NonNullable<Originals['TrackGenerator']>)({ kind: 'audio' });
      const writable = (generatorWritable as NonNullable<Originals['generatorWritable']>).call(standIn);
      f = { member: m, standIn, writable, real: null, abort: null, idle: Promise.resolve() };
      feeds.set(m, f);
    }
    feed(f); // while released: fed at the reacquire (onSwapped)
    return f.standIn;
  }

  reg.onSwapped((swapped) => {
    for (const m of swapped) {
      const f = feeds.get(m);
      if (f) feed(f);
    }
  });
  // The page stopped its track (or the device went away): its processors end as they would on it.
  reg.onEnded((m) => {
    const f = feeds.get(m);
    if (!f) return;
    feeds.delete(m);
    f.abort?.abort();
    f.abort = null;
    o.stop.call(f.standIn);
  });
  // Without stand-ins (a browser without generators), a release would close the page's processor
  // for good: a processor on a managed track then keeps its device open.
  if (!canStandIn) {
    reg.addHold((g) => {
      for (const p of processors) {
        const m = reg.members.get(p.track);
        if (m && m.group === g && !m.ended) return KEPT.processor;
      }
      return null;
    });
  }

  if (o.TrackProcessor) {
    replaceConstructor(w, 'MediaStreamTrackProcessor', (Original, args, newTarget) => {
      // Chromium takes `({track, maxBufferSize})` and the older `(track, bufferSize)`.
      const [first, ...rest] = args;
      const positional = first instanceof TrackC;
      const t = positional ? first : (first as { track?: unknown } | null | undefined)?.track;
      const m = t instanceof TrackC ? reg.members.get(t as Track) : undefined;
      let standIn: Track | null = null;
      if (m) {
        try {
          standIn = standInFor(m);
        } catch {}
      }
      let built = args;
      if (standIn)
        built = positional ? [standIn, ...rest] : [{ ...(first as object), track: standIn }, ...rest];
      const out = o.construct(Original as never, built, newTarget) as object;
      if (t instanceof TrackC) {
        try {
          const readable = o.processorReadable?.call(out);
          if (readable) processors.add({ track: t as Track, readable });
          reg.markSeen(t as Track);
          reg.evaluateAll();
        } catch {}
      }
      return out;
    });
  }

  // ---- where the frames go -----------------------------------------------------------------------------
  const GenProto = (w as unknown as { MediaStreamTrackGenerator?: { prototype: object } })
    .MediaStreamTrackGenerator?.prototype;
  replaceAccessor<WritableStream>(GenProto, 'writable', (orig) => ({
    get(this: unknown) {
      const writable = orig.get(this);
      try {
        if (writable && !generatorOf.has(writable) && o.kind.call(this as Track) === 'audio') {
          generatorOf.set(writable, this as Track);
          generators.add(this as Track);
          changed();
        }
      } catch {}
      return writable;
    },
  }));
  const RSProto = w.ReadableStream?.prototype;
  replaceMethod(RSProto, 'pipeTo', (original) => {
    const { pipeTo } = {
      pipeTo(this: ReadableStream, dest: WritableStream, options?: StreamPipeOptions) {
        const p = (original as unknown as AnyFn).call(this, dest, options) as Promise<void>;
        try {
          if (dest && typeof dest === 'object') {
            links.link(this, dest);
            const done = () => {
              links.unlink(this, dest);
              changed();
            };
            p.then(done, done);
            changed();
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
            links.link(this, out);
            changed();
          }
        } catch {}
        return out;
      },
    };
    return pipeThrough as ReadableStream['pipeThrough'];
  });

  /** A postMessage's transfer list (`transfer` or `{transfer}`): readables and writables transferred
   * together are linked (the worker's transform connects them); a transferred track is read elsewhere. */
  function noteTransfer(arg: unknown): void {
    const list = Array.isArray(arg) ? arg : (arg as { transfer?: unknown } | null | undefined)?.transfer;
    if (!Array.isArray(list)) return;
    const readables: object[] = [];
    const writables: object[] = [];
    let tracks = false;
    for (let i = 0; i < list.length; i++) {
      const x: unknown = list[i];
      if (o.ReadableStream && x instanceof o.ReadableStream) readables.push(x);
      else if (o.WritableStream && x instanceof o.WritableStream) writables.push(x);
      else if (x instanceof TrackC) {
        transferred.add(x as Track);
        tracks = true;
      }
    }
    for (const r of readables) for (const wr of writables) links.link(r, wr);
    if (tracks) reg.evaluateAll();
    else if (readables.length > 0 && writables.length > 0) changed();
  }
  for (const proto of [w.Worker?.prototype, w.MessagePort?.prototype]) {
    replaceMethod(proto as { postMessage: AnyFn } | undefined, 'postMessage', (original) => {
      const { postMessage } = {
        postMessage(this: unknown, ...args: unknown[]) {
          const out = original.apply(this, args);
          try {
            noteTransfer(args[1]);
          } catch {}
          return out;
        },
      };
      return postMessage;
    });
  }
}
