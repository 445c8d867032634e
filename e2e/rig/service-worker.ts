// Driving the extension's test surface (`globalThis.micoff`, extension/src/background/test-surface.ts)
// from Playwright: every call is a `worker.evaluate`, so arguments and results are plain data.
import type { Worker } from '@playwright/test';
import type { HostTraffic } from '../../extension/src/background/host-client.ts';
import type { HostStatus } from '../../extension/src/shared/host-status.ts';
import type { AudioSnapshot } from '../../extension/src/shared/messages/popup-background.ts';
import type { ExtensionToHost, HistorySnapshot, ResultByType } from '../../extension/src/shared/protocol.ts';
import { waitFor } from './proc.ts';

type Req = ExtensionToHost extends infer R ? (R extends { id: number } ? Omit<R, 'id'> : never) : never;
type MicoffLike = {
  host: { request(r: unknown): Promise<unknown>; status(): HostStatus; traffic(): HostTraffic };
  audio: { snapshot(): AudioSnapshot };
  popups: { history(): HistorySnapshot | null };
};

export class ExtensionWorker {
  constructor(readonly worker: Worker) {}

  /** `micoff.host.request(req)` in the service worker: the host's result, or the error's message. */
  request<K extends Req['type']>(req: Extract<Req, { type: K }>): Promise<ResultByType[K]> {
    return this.worker.evaluate(
      (r) => (globalThis as unknown as { micoff: MicoffLike }).micoff.host.request(r),
      req as unknown,
    ) as Promise<ResultByType[K]>;
  }

  hostStatus(): Promise<HostStatus> {
    return this.worker.evaluate(() => (globalThis as unknown as { micoff: MicoffLike }).micoff.host.status());
  }

  /** The extension's audio snapshot: folded ONLY from the host's `audio` subscription events. */
  audioSnapshot(): Promise<AudioSnapshot> {
    return this.worker.evaluate(() =>
      (globalThis as unknown as { micoff: MicoffLike }).micoff.audio.snapshot(),
    );
  }

  /** Requests sent to the host by type and events received by topic since the background started. */
  hostTraffic(): Promise<HostTraffic> {
    return this.worker.evaluate(() =>
      (globalThis as unknown as { micoff: MicoffLike }).micoff.host.traffic(),
    );
  }

  /** The history as the open popups have it (the host's, saved figure since the browser started). */
  popupHistory(): Promise<HistorySnapshot | null> {
    return this.worker.evaluate(() =>
      (globalThis as unknown as { micoff: MicoffLike }).micoff.popups.history(),
    );
  }

  hasTestSurface(): Promise<boolean> {
    return this.worker.evaluate(() => typeof (globalThis as { micoff?: unknown }).micoff === 'object');
  }

  async waitHostConnected(timeoutMs = 15_000): Promise<HostStatus> {
    let last: HostStatus | null = null;
    try {
      return await waitFor(
        'micoff-host to be connected',
        async () => {
          last = await this.hostStatus();
          return last.state === 'connected' ? last : null;
        },
        { timeoutMs, intervalMs: 100 },
      );
    } catch (e) {
      throw new Error(`${(e as Error).message}; host status: ${JSON.stringify(last)}`);
    }
  }

  /** Waits until the audio snapshot satisfies `pred`, returning it. */
  waitAudio(what: string, pred: (s: AudioSnapshot) => boolean, timeoutMs = 15_000): Promise<AudioSnapshot> {
    return waitFor(
      what,
      async () => {
        const s = await this.audioSnapshot();
        return pred(s) ? s : null;
      },
      { timeoutMs, intervalMs: 100 },
    );
  }
}
