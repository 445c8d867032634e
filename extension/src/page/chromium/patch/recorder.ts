// MediaRecorder on a stream with a managed track records a private shadow stream of the real tracks.
// A recording holds its device open (a MediaRecorder stops when its stream's tracks change). One
// started while the device was released records live stand-ins (track generators), fed from the
// device once it is back: the only case in which micoff touches audio frames, and it ends with the
// recording.
import { KEPT } from '../../../shared/release-decision.ts';
import type { Originals, Realm, Track } from '../../common/originals.ts';
import { replaceAccessor, replaceConstructor, replaceMethod } from '../../common/originals.ts';
import type { Member, TrackRegistry } from '../track-registry.ts';

const RECORDING = KEPT.recording;

interface Feed {
  member: Member;
  gen: Track & { writable: WritableStream };
  abort: AbortController | null;
  src: Track | null;
}

interface RecorderEntry {
  rec: MediaRecorder;
  page: MediaStream;
  shadow: MediaStream;
  feeds: Feed[];
}

export function patchRecorder(w: Realm, o: Originals, reg: TrackRegistry): void {
  if (!w.MediaRecorder) return;
  const recorders = new Set<RecorderEntry>();
  const recorderOf = new WeakMap<MediaRecorder, RecorderEntry>();
  /** Recorders on streams without a managed track (e.g. a WebAudio destination's), for the graph. */
  const others = new Set<{ rec: MediaRecorder; page: MediaStream }>();
  const otherOf = new WeakMap<MediaRecorder, { rec: MediaRecorder; page: MediaStream }>();
  reg.addConsumers((t) => {
    for (const r of [...recorders, ...others]) {
      if (r.rec.state !== 'inactive' && o.getTracks.call(r.page).includes(t)) {
        return [{ kind: 'sink', why: RECORDING }];
      }
    }
    return [];
  });

  reg.onPrune(() => {
    for (const r of recorders) {
      if (r.rec.state === 'inactive' && !reg.liveIn(r.page)) recorders.delete(r);
    }
    for (const r of others) if (r.rec.state === 'inactive') others.delete(r);
  });
  reg.addHold((g) => {
    for (const r of recorders) {
      if (r.rec.state === 'inactive') continue;
      if (reg.managedIn(r.page).some((m) => m.group === g && !m.ended)) return RECORDING;
    }
    return null;
  });
  reg.onSwapped(feedRecorders);

  /** Before a recorder starts: a released member's dead track in its stream would make start() throw
   * (NotSupportedError, where without micoff it records the disabled track's silence), so it gets a
   * live stand-in. */
  function standIns(r: RecorderEntry): void {
    if (!o.TrackGenerator) return;
    for (const t of o.getTracks.call(r.shadow)) {
      const m = reg.byReal.get(t);
      if (!m || m.ended || !o.isEnded(t)) continue;
      const gen = new o.TrackGenerator({ kind: 'audio' });
      o.addTrack.call(r.shadow, gen);
      o.removeTrack.call(r.shadow, t);
      r.feeds.push({ member: m, gen, abort: null, src: null });
    }
  }

  /** After a reacquire: pump the device into the stand-ins of recorders started while it was off. */
  function feedRecorders(swapped: Member[]): void {
    const { TrackProcessor, pipeTo, AbortController: Abort } = o;
    if (!TrackProcessor || !pipeTo || !Abort) return;
    for (const r of recorders) {
      for (const f of r.feeds) {
        if (f.abort || !swapped.includes(f.member) || o.isEnded(f.member.real)) continue;
        try {
          const src = o.clone.call(f.member.real);
          const abort = new Abort();
          const readable = new TrackProcessor({ track: src }).readable;
          pipeTo.call(readable, f.gen.writable, { signal: abort.signal }).catch(() => {});
          Object.assign(f, { src, abort });
        } catch {}
      }
    }
  }

  /** The recording is over: the stand-ins go, the recorder's stream holds the members' tracks again. */
  function dropStandIns(r: RecorderEntry): void {
    for (const f of r.feeds) {
      f.abort?.abort();
      if (f.src) o.stop.call(f.src);
      o.addTrack.call(r.shadow, f.member.real);
      o.removeTrack.call(r.shadow, f.gen);
      o.stop.call(f.gen);
    }
    r.feeds = [];
  }

  replaceConstructor<typeof MediaRecorder>(w, 'MediaRecorder', (Original, args, newTarget) => {
    const [stream, ...rest] = args as [MediaStream, ...unknown[]];
    const managed = stream instanceof o.MediaStream && reg.managedIn(stream).length > 0;
    const rec = o.construct(
      Original,
      [managed ? reg.shadowed(stream) : stream, ...rest],
      newTarget,
    ) as MediaRecorder;
    if (managed) {
      const shadow = o.recorderStream?.call(rec) as MediaStream;
      const entry: RecorderEntry = { rec, page: stream, shadow, feeds: [] };
      recorders.add(entry);
      recorderOf.set(rec, entry);
      // A recorder that stops may let a muted device go: the reason it was kept no longer holds.
      o.addEventListener.call(rec, 'stop', () => {
        dropStandIns(entry);
        for (const m of reg.managedIn(stream)) reg.unhold(m.group, RECORDING);
      });
    } else if (stream instanceof o.MediaStream) {
      const entry = { rec, page: stream };
      others.add(entry);
      otherOf.set(rec, entry);
      o.addEventListener.call(rec, 'stop', () => reg.evaluateAll());
    }
    return rec;
  });
  replaceMethod(
    w.MediaRecorder.prototype,
    'start',
    (original) =>
      ({
        start(this: MediaRecorder, timeslice?: number) {
          const r = recorderOf.get(this);
          if (r) {
            try {
              standIns(r);
            } catch {}
          }
          const other = otherOf.get(this);
          if (other) others.add(other); // pruned while inactive
          const out = original.call(this, timeslice);
          reg.evaluateAll();
          return out;
        },
      }).start,
  );
  replaceAccessor<MediaStream>(w.MediaRecorder.prototype, 'stream', () => ({
    get(this: unknown) {
      const s = o.recorderStream?.call(this as MediaRecorder) as MediaStream;
      return reg.shadowPage.get(s) ?? s;
    },
  }));
}
