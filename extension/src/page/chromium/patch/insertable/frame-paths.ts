// Where an insertable-streams processor's frames go, as the audio graph (audibility.ts) reads it: the
// processors the page built, the page's audio generators, the stream links between them
// (stream-links.ts) and the tracks transferred out of micoff's sight. A processor passes the path on to
// the generators its frames were followed to; frames that go where micoff cannot follow hear.
import { KEPT } from '../../../../shared/release-decision.ts';
import type { Originals, Track } from '../../../common/originals.ts';
import type { Vertex } from '../../graph/audibility.ts';
import { createStreamLinks } from '../../graph/stream-links.ts';
import type { TrackRegistry } from '../../track-registry.ts';

/** A processor the page built, on the (page-visible) track it reads. */
export interface ProcessorEntry {
  track: Track;
  readable: ReadableStream;
}

type Reg = Pick<TrackRegistry, 'addConsumers' | 'onPrune' | 'trackVertex' | 'members' | 'evaluateAll'>;

export type FramePaths = ReturnType<typeof createFramePaths>;

/** `TrackC` is the realm's MediaStreamTrack (captured at install: transferred tracks are its). */
export function createFramePaths(o: Originals, reg: Reg, TrackC: typeof MediaStreamTrack) {
  const links = createStreamLinks();
  const generatorOf = new WeakMap<object, Track>(); // a page generator's writable -> the generator
  const processors = new Set<ProcessorEntry>();
  const generators = new Set<Track>(); // the page's audio generators (their writables were handed out)
  /** Tracks transferred to a worker or another realm: read by code micoff cannot see. */
  const transferred = new WeakSet<Track>();

  const follow = (p: ProcessorEntry) => links.follow(p.readable, (s) => generatorOf.get(s) ?? null);

  const processorVertex = (p: ProcessorEntry): Vertex => ({
    kind: 'node',
    key: p,
    reads: null,
    next() {
      const { ends, open } = follow(p);
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
      const { ends, open } = follow(p);
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

  /** Decide again, when there is a processor whose paths may have changed. */
  const changed = () => {
    if (processors.size > 0) reg.evaluateAll();
  };

  return {
    links,
    processors,
    changed,
    /** A processor the page built on `track`, reading `readable`. */
    addProcessor(track: Track, readable: ReadableStream): void {
      processors.add({ track, readable });
    },
    /** A page generator handed out its writable: frames written there come out of `generator`. */
    addGenerator(writable: object, generator: Track): boolean {
      if (generatorOf.has(writable)) return false;
      generatorOf.set(writable, generator);
      generators.add(generator);
      return true;
    },
    /** A postMessage's transfer list (`transfer` or `{transfer}`): readables and writables transferred
     * together are linked (the worker's transform connects them); a transferred track is read
     * elsewhere. */
    noteTransfer(arg: unknown): void {
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
    },
  };
}
