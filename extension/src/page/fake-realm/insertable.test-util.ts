// The fake realm's insertable streams over Node's web streams: the realm's own ReadableStream (so
// patching its pipeTo / pipeThrough leaves Node's alone), generators (tracks fed by their writable),
// processors (a track's frames as a readable, closed when it ends), an identity transform, workers
// and message ports that record what is posted.
import { accessor, define } from './accessors.test-util.ts';
import { type Frame, type Media, NO_DEVICE, type Sink } from './media.test-util.ts';

export function fakeInsertable({ FakeTrack }: Pick<Media, 'FakeTrack'>) {
  type FakeTrack = InstanceType<Media['FakeTrack']>;
  /** The realm's own ReadableStream, so patching its pipeTo / pipeThrough leaves Node's alone. */
  class FakeReadable<R = Frame> extends ReadableStream<R> {
    override pipeTo(dest: WritableStream<R>, options?: StreamPipeOptions): Promise<void> {
      return super.pipeTo(dest, options);
    }
    override pipeThrough<T>(
      pair: ReadableWritablePair<T, R>,
      options?: StreamPipeOptions,
    ): ReadableStream<T> {
      return super.pipeThrough(pair, options);
    }
  }
  /** A generator is a track whose frames are what is written to its writable. */
  class FakeGenerator extends FakeTrack {
    readonly _writable: WritableStream<Frame>;
    /** Everything written to the generator. */
    readonly _written: Frame[] = [];
    constructor(init: { kind: string }) {
      super(NO_DEVICE, init.kind);
      this._writable = new WritableStream<Frame>({
        write: (frame) => {
          this._written.push(frame);
          this._emit(frame);
        },
      });
    }
  }
  define(FakeGenerator, {
    writable: accessor(function (this: FakeGenerator) {
      return this._writable;
    }),
  });
  /** A processor's readable carries its track's frames and closes when the track ends. */
  class FakeProcessor {
    readonly _track: FakeTrack;
    readonly _readable: FakeReadable<Frame>;
    constructor(init: FakeTrack | { track: FakeTrack }) {
      const track = init instanceof FakeTrack ? init : init.track;
      this._track = track;
      let sink: Sink | null = null;
      this._readable = new FakeReadable<Frame>({
        start(c) {
          sink = c;
          if (track._state === 'ended') c.close();
          else track._sinks.add(c);
        },
        cancel() {
          if (sink) track._sinks.delete(sink);
        },
      });
    }
  }
  define(FakeProcessor, {
    readable: accessor(function (this: FakeProcessor) {
      return this._readable;
    }),
  });
  /** An identity transform whose readable is the realm's (a page's TransformStream, in effect). */
  const transform = () => {
    let out: Sink | null = null;
    const readable = new FakeReadable<Frame>({
      start(c) {
        out = c;
      },
    });
    const writable = new WritableStream<Frame>({ write: (f) => out?.enqueue(f) });
    return { readable, writable };
  };
  class FakeWorker {
    _posted: unknown[][] = [];
    postMessage(...args: unknown[]): void {
      this._posted.push(args);
    }
  }
  class FakeMessagePort extends FakeWorker {}

  return { FakeReadable, FakeGenerator, FakeProcessor, transform, FakeWorker, FakeMessagePort };
}
