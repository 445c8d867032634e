// The Firefox build's page world: Firefox's own pref releases the microphone; micoff watches the mute
// so the background can check that the release is in effect (background/native-release.ts). It keeps
// the frame's live microphone tracks per device, which are enabled and since when all are disabled
// (mute-book.ts), and reports that through the bridge. getUserMedia, mozGetUserMedia, a track's
// `enabled` setter, `stop` and `clone`, and MediaStream's `clone` call the browser's own first, then
// take note, and look like the originals (originals.ts). `follow` adds micoff's own part on top
// (firefox/quiet.ts). Hostile territory: built-ins captured first, bookkeeping failures swallowed.
import type { Bridge } from '../common/bridge.ts';
import { groupKey } from '../common/device-groups.ts';
import {
  captureOriginals,
  followMethod,
  maskToString,
  type Originals,
  type Realm,
  replaceMethod,
  replaceSetter,
  type Track,
} from '../common/originals.ts';
import { MuteBook } from './mute-book.ts';

/** What a follower of the mute book gets: the realm's captured built-ins, the book, and the frame's
 * report (to send after a change of its own). */
export interface MuteWatch {
  o: Originals;
  book: MuteBook<Track>;
  report(): void;
}

/** Watches one realm (the frame's own window). Returns false when the realm has no getUserMedia.
 * `follow` (installed last) returns what runs after each change of the book, before the report. */
export function observeMutes(
  w: Realm,
  bridge: Bridge,
  follow?: (watch: MuteWatch) => (() => void) | null,
): boolean {
  const o = captureOriginals(w);
  if (!o) return false;
  const apply = Reflect.apply;
  const then = w.Promise.prototype.then;
  const book = new MuteBook<Track>();
  const send = () => bridge.report(0, book.report());
  let afterChange: (() => void) | null = null;
  const report = () => {
    try {
      afterChange?.();
    } catch {}
    send();
  };

  const onEnded = (t: Track) => () => {
    if (book.remove(t, o.dateNow())) report();
  };
  /** A live audio track on a device: watched from now on (with the device of `source`, for clones). */
  const adopt = (t: Track, source: Track = t): boolean => {
    if (book.has(t) || o.isEnded(t)) return false;
    const key = groupKey(apply(o.getSettings, source, []) as MediaTrackSettings);
    const label = apply(o.label, t, []) as string;
    const added = book.add(t, key, label, apply(o.getEnabled, t, []) as boolean, o.dateNow());
    if (added) apply(o.addEventListener, t, ['ended', onEnded(t)]);
    return added;
  };
  const adoptStream = (stream: MediaStream) => {
    let touched = false;
    for (const t of apply(o.getAudioTracks, stream, []) as Track[]) touched = adopt(t) || touched;
    if (touched) report();
  };

  maskToString(w.Function.prototype);
  const gum = replaceMethod(
    o.MediaDevicesProto,
    'getUserMedia',
    (original) =>
      ({
        // Not `async`: the page could tell an AsyncFunction from the native method.
        getUserMedia(this: MediaDevices, constraints?: MediaStreamConstraints) {
          const p = apply(original, this, [constraints]) as Promise<MediaStream>;
          return apply(then, p, [
            (stream: MediaStream) => {
              try {
                adoptStream(stream);
              } catch {}
              return stream;
            },
          ]) as Promise<MediaStream>;
        },
      }).getUserMedia,
  );
  if (!gum) return false;

  // The legacy callback form, where this Firefox still has it: only the success callback is wrapped.
  replaceMethod(
    w.Navigator.prototype as unknown as { mozGetUserMedia: (...a: unknown[]) => void },
    'mozGetUserMedia',
    (original) =>
      ({
        mozGetUserMedia(this: Navigator, c: unknown, ok: unknown, fail: unknown) {
          const success =
            typeof ok === 'function'
              ? (stream: MediaStream) => {
                  try {
                    adoptStream(stream);
                  } catch {}
                  return apply(ok, undefined, [stream]);
                }
              : ok;
          return apply(original, this, [c, success, fail]);
        },
      }).mozGetUserMedia,
  );

  replaceSetter<boolean>(o.TrackProto, 'enabled', (set) => {
    // An accessor's own setter: named like the browser's, no `prototype`, not a constructor.
    const holder = {
      set enabled(v: boolean) {
        set(this, v);
        try {
          if (book.setEnabled(this as Track, apply(o.getEnabled, this, []) as boolean, o.dateNow())) report();
        } catch {}
      },
    };
    return Object.getOwnPropertyDescriptor(holder, 'enabled')?.set as (this: unknown, v: boolean) => void;
  });

  /** After the browser's own method: micoff's note, its failure swallowed; `note` says whether the
   * report changed. */
  const noting =
    <S>(note: (self: S, result: unknown) => boolean) =>
    (self: S, _args: unknown[], result: unknown): void => {
      try {
        if (note(self, result)) report();
      } catch {}
    };

  followMethod(
    o.TrackProto,
    'stop',
    noting((t: Track) => book.remove(t, o.dateNow())),
  );
  followMethod(
    o.TrackProto,
    'clone',
    noting((t: Track, c) => book.has(t) && adopt(c as Track, t)),
  );
  // MediaStream.clone() clones every track without going through MediaStreamTrack.clone(); the
  // clones come in the same order as the originals.
  followMethod(
    o.StreamProto,
    'clone',
    noting((stream: MediaStream, copy) => {
      const from = apply(o.getAudioTracks, stream, []) as Track[];
      const to = apply(o.getAudioTracks, copy, []) as Track[];
      let touched = false;
      for (let i = 0; i < from.length && i < to.length; i++) {
        const src = from[i] as Track;
        if (book.has(src)) touched = adopt(to[i] as Track, src) || touched;
      }
      return touched;
    }),
  );
  afterChange = follow?.({ o, book, report: send }) ?? null;
  return true;
}
