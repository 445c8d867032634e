// The page's processor on a managed track is built on a micoff-owned stand-in (a generator), fed by a
// native pipe from a processor of micoff's own on the real track. A release stops the real track,
// which ends only that pipe; a reacquire pipes a processor on the fresh track into the same stand-in.
// The page's processor, its readable and whatever reads it (a worker) never see the device go.
// Without generators (canStandIn false) a processor on a managed track holds its device open instead.
import { KEPT } from '../../../../shared/release-decision.ts';
import type { Originals, Track } from '../../../common/originals.ts';
import type { Member, TrackRegistry } from '../../track-registry.ts';

/** A stand-in behind the page's processors on one member, and the pipe that feeds it. */
export interface Feed {
  member: Member;
  standIn: Track;
  writable: WritableStream;
  /** The real track piped in (null: none yet). */
  real: Track | null;
  abort: AbortController | null;
  /** Settles once the current pipe has let go of the stand-in's writable. */
  idle: Promise<void>;
}

/** The stand-in's pipe neither closes, aborts nor cancels it: only the real side ends. */
const PIPE = { preventClose: true, preventAbort: true, preventCancel: true };

type Reg = Pick<TrackRegistry, 'onSwapped' | 'onEnded' | 'addHold' | 'members'>;

/** What the originals must offer for stand-ins: a generator, a processor, pipeTo and AbortController. */
export function canStandIn(o: Originals): boolean {
  const { TrackGenerator, TrackProcessor, pipeTo, AbortController: Abort } = o;
  return !!(
    TrackGenerator &&
    TrackProcessor &&
    pipeTo &&
    Abort &&
    o.generatorWritable &&
    o.processorReadable
  );
}

export type StandIns = ReturnType<typeof createStandIns>;

/** `processorTracks` lists the (page-visible) tracks of the page's processors, for the hold. */
export function createStandIns(o: Originals, reg: Reg, processorTracks: () => Iterable<Track>) {
  const feeds = new Map<Member, Feed>();
  const able = canStandIn(o);
  const TrackGenerator = o.TrackGenerator as NonNullable<Originals['TrackGenerator']>;
  const TrackProcessor = o.TrackProcessor as NonNullable<Originals['TrackProcessor']>;
  const pipeTo = o.pipeTo as NonNullable<Originals['pipeTo']>;
  const generatorWritable = o.generatorWritable as NonNullable<Originals['generatorWritable']>;
  const processorReadable = o.processorReadable as NonNullable<Originals['processorReadable']>;
  const Abort = o.AbortController as typeof AbortController;

  /** Pipe the member's current real track into its stand-in, once the previous pipe let go of it. */
  function feed(f: Feed): void {
    const real = f.member.real;
    if (!able || f.member.ended || f.real === real || o.isEnded(real)) return;
    f.abort?.abort();
    const abort = new Abort();
    f.real = real;
    f.abort = abort;
    f.idle = f.idle
      .then(() => {
        if (f.abort !== abort || o.isEnded(real)) return;
        const readable = processorReadable.call(new TrackProcessor({ track: real }));
        const pipe = pipeTo.call(readable, f.writable, { ...PIPE, signal: abort.signal });
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
  if (!able) {
    reg.addHold((g) => {
      for (const t of processorTracks()) {
        const m = reg.members.get(t);
        if (m && m.group === g && !m.ended) return KEPT.processor;
      }
      return null;
    });
  }

  return {
    /** The member's stand-in (made on first use), fed from its real track; null when there can be none. */
    standInFor(m: Member): Track | null {
      if (!able || m.ended) return null;
      let f = feeds.get(m);
      if (!f) {
        const standIn = new TrackGenerator({ kind: 'audio' });
        const writable = generatorWritable.call(standIn);
        f = { member: m, standIn, writable, real: null, abort: null, idle: Promise.resolve() };
        feeds.set(m, f);
      }
      feed(f); // while released: fed at the reacquire (onSwapped)
      return f.standIn;
    },
  };
}
