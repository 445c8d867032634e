// The fake realm's WebAudio: nodes that record their connections, a source node on a stream, the node
// kinds audibility.ts tells apart, a context that makes source nodes (and lists them) and closes.
import { accessor, define } from './accessors.test-util.ts';
import { type Media, NO_DEVICE } from './media.test-util.ts';

type FakeStream = InstanceType<Media['FakeStream']>;

export function fakeWebAudio({ FakeTrack, FakeStream }: Pick<Media, 'FakeTrack' | 'FakeStream'>) {
  class FakeAudioNode extends EventTarget {
    /** Connections as made: [destination, output?, input?]. */
    _edges: unknown[][] = [];
    constructor(readonly _ctx: FakeAudioContext) {
      super();
    }
    connect(...args: unknown[]): unknown {
      this._edges.push(args);
      return args[0];
    }
    disconnect(...args: unknown[]): void {
      this._edges = args.length === 0 ? [] : this._edges.filter((c) => c[0] !== args[0]);
    }
  }
  class FakeSourceNode extends FakeAudioNode {
    readonly _stream: FakeStream;
    constructor(ctx: FakeAudioContext, init: { mediaStream: FakeStream }) {
      super(ctx);
      this._stream = init.mediaStream;
    }
  }
  define(FakeSourceNode, {
    mediaStream: accessor(function (this: FakeSourceNode) {
      return this._stream;
    }),
  });
  class FakeAnalyser extends FakeAudioNode {}
  class FakeScriptProcessor extends FakeAudioNode {}
  class FakeWorkletNode extends FakeAudioNode {
    readonly _port = { onmessage: null };
  }
  define(FakeWorkletNode, {
    port: accessor(function (this: FakeWorkletNode) {
      return this._port;
    }),
  });
  class FakeAudioDestination extends FakeAudioNode {}
  class FakeStreamDestination extends FakeAudioNode {
    readonly _stream = new FakeStream([new FakeTrack(NO_DEVICE)]);
  }
  define(FakeStreamDestination, {
    stream: accessor(function (this: FakeStreamDestination) {
      return this._stream;
    }),
  });
  class FakeAudioParam {}
  /** AudioScheduledSourceNode: `start` on its prototype, as in browsers. */
  class FakeScheduledSource extends FakeAudioNode {
    _started = false;
    start(): void {
      this._started = true;
    }
  }
  class FakeConstantSource extends FakeScheduledSource {
    readonly _offset: number;
    constructor(ctx: FakeAudioContext, init: { offset?: number } = {}) {
      super(ctx);
      this._offset = init.offset ?? 1;
    }
  }
  class FakeAudioContext {
    state: AudioContextState = 'running';
    /** Every context made, with its options (micoff's stand-in graph among them). */
    static _all: FakeAudioContext[] = [];
    constructor(readonly _options: unknown = undefined) {
      FakeAudioContext._all.push(this);
    }
    resume(): Promise<void> {
      if (this.state !== 'closed') this.state = 'running';
      return Promise.resolve();
    }
    readonly destination: FakeAudioDestination = new FakeAudioDestination(this);
    /** Every source node the context's own method made (the page's and micoff's inner ones). */
    readonly _made: FakeSourceNode[] = [];
    createMediaStreamSource(s: FakeStream): FakeSourceNode {
      const node = new FakeSourceNode(this, { mediaStream: s });
      this._made.push(node);
      return node;
    }
    createAnalyser(): FakeAnalyser {
      return new FakeAnalyser(this);
    }
    createMediaStreamDestination(): FakeStreamDestination {
      return new FakeStreamDestination(this);
    }
    close(): Promise<void> {
      this.state = 'closed';
      return Promise.resolve();
    }
  }

  return {
    FakeAudioNode,
    FakeSourceNode,
    FakeAnalyser,
    FakeScriptProcessor,
    FakeWorkletNode,
    FakeAudioDestination,
    FakeStreamDestination,
    FakeAudioParam,
    FakeAudioContext,
    FakeScheduledSource,
    FakeConstantSource,
  };
}
