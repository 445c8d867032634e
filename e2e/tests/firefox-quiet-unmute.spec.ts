// micoff's part of a muted call in Debian's Firefox ESR, both servers (page/firefox/quiet.ts): invisible
// to the page (its objects and events before, while and after micoff's part), the popup saying which
// part is in effect, and the far end hearing the unmute in time with its jitter buffer unmoved. The
// CPU bars are in firefox-quiet.spec.ts.
// Method and bar values: docs/design/firefox-install.md#firefox-quiet-bars.
// Raw figures: e2e/artifacts/firefox-quiet-unmute-<server>.json.
import { QUIET_HOLD_MS } from '../../extension/src/shared/firefox-release.ts';
import { firefoxMissing, launchFirefox, pageWaitFor, popupForTab } from '../rig/firefox.ts';
import { expect, test } from '../rig/fixtures.ts';
import { need } from '../rig/needs.ts';
import { waitFor } from '../rig/proc.ts';
import {
  DELAY_MS,
  firefoxRecords,
  micoffDelay,
  openCall,
  sentOver,
  whenQuiet,
} from './firefox-quiet-util.ts';
import { median, saveArtifact } from './release-util.ts';

const CYCLES = 3;
/** The far end's jitter-buffer target 2-4 s after an unmute, ms: far under a pause taken for delay
 * (docs/design/firefox-install.md#firefox-quiet-bars). */
const TARGET_BAR_MS = 250;
/** From micoff's quiet to the unmute in the invisibility test. */
const PAUSE_MS = 3000;

/** What the page can read of its call, for the before/while/after comparison. */
const PAGE_VIEW = `(async () => {
  const [a] = call.pcs;
  const params = call.sender.getParameters();
  let statsOk = true;
  try { await a.getStats(call.track); } catch { statsOk = false; }
  return {
    senderTrackIsPages: call.sender.track === call.track,
    readyState: call.track.readyState,
    enabled: call.track.enabled,
    muted: call.track.muted,
    settings: JSON.stringify(call.track.getSettings()),
    encodings: JSON.stringify(params.encodings.map((e) => ({ active: e.active, rid: e.rid }))),
    statsOk,
    events: window.__events.slice(),
  };
})()`;

/** Every event the page could see of micoff's part: on its track and stream, its connections, its
 * sender's transceiver. */
const RECORD_EVENTS = `window.__events = [];
  const note = (what) => (e) => window.__events.push(what + ':' + e.type);
  for (const t of ['ended', 'mute', 'unmute']) call.track.addEventListener(t, note('track'));
  for (const t of ['addtrack', 'removetrack']) call.stream.addEventListener(t, note('stream'));
  for (const pc of call.pcs)
    for (const t of ['negotiationneeded', 'track', 'signalingstatechange', 'connectionstatechange'])
      pc.addEventListener(t, note('pc'));`;

test('Firefox ESR: micoff’s part is invisible to the page, and the far end hears the unmute within 500 ms', async ({
  rig,
  pages,
}) => {
  need(firefoxMissing());
  test.setTimeout(60_000 + CYCLES * (QUIET_HOLD_MS + 12_000));
  const ff = await launchFirefox({
    env: rig.clientEnv,
    nativeRelease: { delayMs: DELAY_MS, installer: true },
  });
  try {
    await micoffDelay(ff);
    const options = await ff.openExtensionPage('options.html');
    const meeting = await openCall(ff, rig, pages, '?playout=1');
    await meeting.waitForAudioFlowing();
    await meeting.page.evaluate(RECORD_EVENTS);
    type View = { events: string[] } & Record<string, unknown>;
    const view = () => meeting.page.evaluate(PAGE_VIEW) as Promise<View>;
    const before = await view();
    expect(before).toMatchObject({
      senderTrackIsPages: true,
      readyState: 'live',
      enabled: true,
      statsOk: true,
    });
    const popup = await popupForTab(
      ff,
      await ff.openExtensionPage('options.html'),
      new URL(meeting.url).origin,
    );
    const energy = async () => (await meeting.stats()).inbound?.totalAudioEnergy ?? 0;
    const jitter = () =>
      meeting.page.evaluate(`(async () => {
        for (const r of (await call.pcs[1].getStats()).values())
          if (r.type === 'inbound-rtp' && r.kind === 'audio')
            return { n: r.jitterBufferEmittedCount, target: r.jitterBufferTargetDelay };
      })()`) as Promise<{ n: number; target: number }>;
    /** The far end's last packet: its RTP timestamp and when its frame was delivered. */
    const lastPacket = () =>
      meeting.page.evaluate(`(() => {
        const s = call.receiver.getSynchronizationSources()[0];
        return s ? { rtp: s.rtpTimestamp, at: s.timestamp } : null;
      })()`) as Promise<{ rtp: number; at: number } | null>;
    const cycles: {
      quiet_after_mute_ms: number;
      sent_while_quiet: number;
      pause_ms: number;
      energy_ms: number;
      /** Far end, last packet before the unmute to the first after it: RTP clock, delivery (ms). */
      rtp_step_ms: number | null;
      delivered_step_ms: number | null;
      target_ms: number;
    }[] = [];

    for (let i = 0; i < CYCLES; i++) {
      await new Promise((r) => setTimeout(r, DELAY_MS + 300)); // the device on past the delay
      const mutedAt = Date.now();
      await meeting.mute();
      await waitFor('Firefox’s release', async () => ((await firefoxRecords(rig)) === 0 ? true : null), {
        timeoutMs: DELAY_MS + 5000,
      });
      const quietAt = await whenQuiet(options);
      // Quiet: nothing goes out, and what the page reads is what it read before (but `enabled`, which it
      // set itself).
      const sentWhileQuiet = await sentOver(meeting.page, 1000);
      const during = await view();
      expect(during).toEqual({ ...before, enabled: false, events: [] });
      // The popup: Firefox's part in effect, micoff's part quiet.
      await pageWaitFor(popup, 'the popup saying the call sends nothing (micoff’s part)', () => {
        const ff = document.querySelector('#tab-native-release');
        const own = document.querySelector('#tab-micoff-part');
        return (
          ff?.getAttribute('data-finding') === 'in_effect' &&
          /^Firefox's part: /.test(ff.textContent ?? '') &&
          own?.getAttribute('data-quiet') === 'true' &&
          /^micoff's part: the call has sent nothing since /.test(own.textContent ?? '')
        );
      });
      // A pause past the far end's 2 s delay histogram, with the RTP clock's step at the reopen (up to
      // ~0.5 s on PipeWire) to spare (docs/design/firefox-install.md, "micoff's part").
      await new Promise((r) => setTimeout(r, Math.max(0, quietAt + PAUSE_MS - Date.now())));
      const e0 = await energy();
      const p0 = await lastPacket();
      const unmutedAt = Date.now();
      await meeting.unmute();
      const heardAt = await waitFor(
        'the far end’s received energy to rise after the unmute',
        async () => ((await energy()) > e0 + 1e-6 ? Date.now() : null),
        { timeoutMs: 5000, intervalMs: 10 },
      );
      const p1 = await lastPacket();
      // The far end's jitter buffer 2-4 s after the unmute: its target, not the pause.
      await new Promise((r) => setTimeout(r, 2000));
      const j0 = await jitter();
      await new Promise((r) => setTimeout(r, 2000));
      const j1 = await jitter();
      cycles.push({
        quiet_after_mute_ms: quietAt - mutedAt,
        sent_while_quiet: sentWhileQuiet,
        pause_ms: unmutedAt - quietAt,
        energy_ms: heardAt - unmutedAt,
        // Opus: a 48 kHz RTP clock.
        rtp_step_ms: p0 && p1 ? Math.round((p1.rtp - p0.rtp) / 48) : null,
        delivered_step_ms: p0 && p1 ? Math.round(p1.at - p0.at) : null,
        target_ms: Math.round(((j1.target - j0.target) / Math.max(1, j1.n - j0.n)) * 1000),
      });
      expect(await view()).toEqual({ ...before, events: [] });
      expect(
        await popup.evaluate(() => document.querySelector('#tab-micoff-part')?.getAttribute('data-quiet')),
      ).toBe('false');
    }
    saveArtifact(`firefox-quiet-unmute-${rig.kind}.json`, cycles);
    console.log(`firefox-quiet unmute: ${JSON.stringify(cycles)}`);
    for (const c of cycles) {
      expect(c.sent_while_quiet, 'no packets while quiet').toBeLessThanOrEqual(2);
      expect(c.target_ms, 'the far end’s jitter buffer after the unmute').toBeLessThanOrEqual(TARGET_BAR_MS);
    }
    expect(median(cycles.map((c) => c.energy_ms))).toBeLessThanOrEqual(500);
  } finally {
    await ff.close();
  }
});
