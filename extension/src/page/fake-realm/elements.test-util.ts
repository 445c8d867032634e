// The fake realm's elements and recorders: a media element's srcObject, a MediaRecorder (which refuses
// a stream holding an ended track, as Chromium's does), an iframe's contentWindow / contentDocument.
import { accessor, define } from './accessors.test-util.ts';
import type { Media } from './media.test-util.ts';

type FakeStream = InstanceType<Media['FakeStream']>;

export function fakeElements() {
  class FakeMediaElement {
    _src: unknown = null;
  }
  define(FakeMediaElement, {
    srcObject: accessor(
      function (this: FakeMediaElement) {
        return this._src;
      },
      function (this: FakeMediaElement, v: unknown) {
        this._src = v;
      },
    ),
  });
  class FakeRecorder extends EventTarget {
    state: RecordingState = 'inactive';
    constructor(readonly _stream: FakeStream) {
      super();
    }
    /** Chromium refuses to record a stream holding an ended track. */
    start(): void {
      if (this._stream._tracks.some((t) => t._state === 'ended')) throw new Error('NotSupportedError');
      this.state = 'recording';
    }
    stop(): void {
      if (this.state === 'inactive') return;
      this.state = 'inactive';
      this.dispatchEvent(new Event('stop'));
    }
  }
  define(FakeRecorder, {
    stream: accessor(function (this: FakeRecorder) {
      return this._stream;
    }),
  });
  class FakeIFrame {
    _window: unknown = null;
    _document: unknown = null;
  }
  define(FakeIFrame, {
    contentWindow: accessor(function (this: FakeIFrame) {
      return this._window;
    }),
    contentDocument: accessor(function (this: FakeIFrame) {
      return this._document;
    }),
  });

  return { FakeMediaElement, FakeRecorder, FakeIFrame };
}
