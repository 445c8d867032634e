// Page object for e2e/pages/meeting.html (an audio-only loopback call), over a Playwright page
// (Chromium) or a puppeteer one (Firefox over WebDriver BiDi).
import type { BrowserContext, Page } from '@playwright/test';
import { waitFor } from './proc.ts';

export interface TrackState {
  id: string;
  label: string;
  readyState: 'live' | 'ended';
  enabled: boolean;
  muted: boolean;
  settings: MediaTrackSettings;
}

export interface MeetingStats {
  error: string | null;
  track: TrackState | null;
  inbound: {
    audioLevel: number | null;
    totalAudioEnergy: number | null;
    totalSamplesDuration: number | null;
    totalSamplesReceived: number | null;
    concealedSamples?: number | null;
    concealmentEvents?: number | null;
    packetsReceived: number;
    bytesReceived: number;
  } | null;
  outbound: { packetsSent: number; bytesSent: number } | null;
  source?: {
    audioLevel: number | null;
    totalAudioEnergy: number | null;
    totalSamplesDuration?: number | null;
    /** When the browser gathered these statistics, ms (its own stats clock: a cached report keeps its
     * gathering time, where `at` is the page's call). */
    timestamp?: number | null;
  };
  at: number;
}

declare global {
  interface Window {
    ready: Promise<void>;
    mute(): TrackState | null;
    unmute(): TrackState | null;
    stopTrack(): TrackState | null;
    hangUp(): TrackState | null;
    stats(): Promise<MeetingStats>;
  }
}

/** What the page object needs of a page; Playwright's and puppeteer's pages both have it. */
export interface PageLike {
  evaluate<R>(fn: () => R): Promise<Awaited<R>>;
  close(): Promise<void>;
}

export class MeetingPage<P extends PageLike = Page> {
  constructor(
    readonly page: P,
    readonly url: string,
  ) {}

  static async open(context: BrowserContext, url: string): Promise<MeetingPage> {
    const page = await context.newPage();
    const m = new MeetingPage(page, url);
    await page.goto(url);
    return m;
  }

  /** Resolves once the call is connected (getUserMedia succeeded, both peers connected). */
  async ready(timeoutMs = 15_000): Promise<void> {
    await waitFor(
      'the meeting page (window.ready)',
      () => this.page.evaluate(() => window.ready !== undefined),
      {
        timeoutMs,
        intervalMs: 100,
      },
    );
    await Promise.race([
      this.page.evaluate(() => window.ready),
      new Promise((_, j) =>
        setTimeout(() => j(new Error('meeting page: call not up in time')), timeoutMs).unref(),
      ),
    ]);
  }

  stats(): Promise<MeetingStats> {
    return this.page.evaluate(() => window.stats());
  }

  mute(): Promise<TrackState | null> {
    return this.page.evaluate(() => window.mute());
  }

  unmute(): Promise<TrackState | null> {
    return this.page.evaluate(() => window.unmute());
  }

  stopTrack(): Promise<TrackState | null> {
    return this.page.evaluate(() => window.stopTrack());
  }

  hangUp(): Promise<TrackState | null> {
    return this.page.evaluate(() => window.hangUp());
  }

  /** Was the page opened with `playout=1` (received audio is decoded and played)? */
  get playout(): boolean {
    return new URL(this.url).searchParams.get('playout') === '1';
  }

  /**
   * Where the call's level is read: with playout the far end's inbound-rtp; without, the sender's
   * media-source (Chromium decodes nothing then), or inbound-rtp where the media-source stats carry no
   * level (Firefox, which decodes what it receives anyway).
   */
  private level(s: MeetingStats): { audioLevel: number | null; totalAudioEnergy: number | null } | null {
    return this.playout || typeof s.source?.totalAudioEnergy !== 'number' ? s.inbound : s.source;
  }

  /**
   * Waits until audio flows through the call: a level > 0 with growing energy (real signal captured or
   * received, see `level`) and the far end's packetsReceived growing.
   */
  async waitForAudioFlowing(timeoutMs = 15_000): Promise<MeetingStats> {
    let first: MeetingStats | null = null;
    return waitFor(
      this.playout
        ? 'received audio (inbound-rtp audioLevel > 0, totalAudioEnergy growing)'
        : 'captured audio sent and received (media-source or inbound energy and inbound packets growing)',
      async () => {
        const s = await this.stats();
        if (s.error) throw new Error(`meeting page error: ${s.error}`);
        if (!s.inbound) return null;
        first ??= s;
        const packets = s.inbound.packetsReceived > (first.inbound?.packetsReceived ?? 0);
        const now = this.level(s);
        const e = now?.totalAudioEnergy ?? 0;
        return packets && (now?.audioLevel ?? 0) > 0 && e > (this.level(first)?.totalAudioEnergy ?? 0)
          ? s
          : null;
      },
      { timeoutMs, intervalMs: 200 },
    );
  }

  /**
   * Waits until the call carries silence (a disabled track sends zeros): no energy added over a poll
   * interval longer than the test signal's gaps (where `level` reads it).
   */
  async waitForSilence(timeoutMs = 10_000): Promise<MeetingStats> {
    const energy = (s: MeetingStats) => this.level(s)?.totalAudioEnergy ?? 0;
    let prev: MeetingStats | null = null;
    return waitFor(
      'the call to fall silent (no audio energy added for 600 ms)',
      async () => {
        const s = await this.stats();
        const silent = prev !== null && energy(s) - energy(prev) < 1e-6;
        prev = s;
        return silent ? s : null;
      },
      { timeoutMs, intervalMs: 600 },
    );
  }

  close(): Promise<void> {
    return this.page.close();
  }
}
