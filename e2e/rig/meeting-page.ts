// Page object for e2e/pages/meeting.html (an audio-only loopback call).
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
    packetsReceived: number;
    bytesReceived: number;
  } | null;
  outbound: { packetsSent: number; bytesSent: number } | null;
  source?: { audioLevel: number | null; totalAudioEnergy: number | null };
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

export class MeetingPage {
  constructor(
    readonly page: Page,
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
    await this.page.waitForFunction(() => window.ready !== undefined, null, { timeout: timeoutMs });
    await Promise.race([
      this.page.evaluate(() => window.ready),
      new Promise((_, j) => setTimeout(() => j(new Error('meeting page: call not up in time')), timeoutMs).unref()),
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

  /** Waits until the far end receives signal: energy grows and the level is above zero. */
  async waitForAudioFlowing(timeoutMs = 15_000): Promise<MeetingStats> {
    let firstEnergy: number | null = null;
    return waitFor(
      'received audio (inbound-rtp audioLevel > 0 and growing totalAudioEnergy)',
      async () => {
        const s = await this.stats();
        if (s.error) throw new Error(`meeting page error: ${s.error}`);
        const e = s.inbound?.totalAudioEnergy ?? null;
        if (e === null) return null;
        firstEnergy ??= e;
        return (s.inbound?.audioLevel ?? 0) > 0 && e > firstEnergy ? s : null;
      },
      { timeoutMs, intervalMs: 200 },
    );
  }

  /** Waits until the far end hears silence (a disabled track sends zeros). */
  async waitForSilence(timeoutMs = 10_000): Promise<MeetingStats> {
    return waitFor(
      'received audio to fall silent (audioLevel = 0)',
      async () => {
        const s = await this.stats();
        return s.inbound && (s.inbound.audioLevel ?? 0) === 0 ? s : null;
      },
      { timeoutMs, intervalMs: 200 },
    );
  }

  close(): Promise<void> {
    return this.page.close();
  }
}
