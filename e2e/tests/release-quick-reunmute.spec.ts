// Bench (MICOFF_BENCH_QUICK_REUNMUTE=1): a hotkey unmute soon after the previous one, with micoff's
// browser alone (no flip beside it, unlike release-first-words.spec.ts). The hotkey learned, then
// unmutes ~1 s and ~4 s after the previous one, alternating, CYCLES of each: when the record stream is
// back after the Ctrl keydown (polled at the server), when the first words leave the sender after the
// unmute (first-words-util.ts). Reported, not a bar (docs/design/release-on-mute.md "First words:
// priming, and the e2e bar"). Raw samples: e2e/artifacts/release-quick-reunmute-<project>.json.
import { startAudioRig } from '../rig/audio-rig.ts';
import { extensionServiceWorker, launchChromium } from '../rig/chromium.ts';
import { test } from '../rig/fixtures.ts';
import { extensionId } from '../rig/host.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { need } from '../rig/needs.ts';
import { startXvfb, xvfbMissing } from '../rig/xvfb.ts';
import { INSTRUMENT, recordStreamsOn } from './first-words-util.ts';
import { median, saveArtifact, setReleaseSettings } from './release-util.ts';

const CYCLES = Number(process.env.MICOFF_FIRST_WORDS_CYCLES ?? 6);

test.skip(process.env.MICOFF_BENCH_QUICK_REUNMUTE !== '1', 'a benchmark: MICOFF_BENCH_QUICK_REUNMUTE=1');

test('quick hotkey re-unmute, micoff alone: stream back after the keydown, first words after the unmute (bench)', async ({
  audioServer,
  pages,
}) => {
  test.setTimeout(300_000);
  need(xvfbMissing());
  const rig = await startAudioRig(audioServer, { reader: false, tone: false });
  const x = await startXvfb();
  const b = await launchChromium({
    env: { ...rig.clientEnv, PULSE_SOURCE: 'mic' },
    display: x.display,
    realFocus: true,
  });
  const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
  try {
    await rig.playInto('spk', 'speech');
    const sw = await extensionServiceWorker(b.context, extensionId());
    await setReleaseSettings(sw, { releaseOnMute: true, releaseDelayMs: 0 });
    const m = await MeetingPage.open(b.context, pages.url('meeting.html?playout=1&encoded=1'));
    await m.ready();
    await m.waitForAudioFlowing();
    await m.page.evaluate(INSTRUMENT);
    const mute = async () => {
      await m.mute();
      const t0 = Date.now();
      while ((await recordStreamsOn(rig, 'mic')) !== 0 && Date.now() - t0 < 5000) await sleep(5);
      await sleep(700);
    };
    /** Ctrl, 100 ms, D: returns when the stream came back (ms after the Ctrl keydown began) and D. */
    const hotkey = async () => {
      const t0 = performance.now();
      let streamMs = null as number | null;
      const poll = (async () => {
        while (performance.now() - t0 < 1500) {
          if ((await recordStreamsOn(rig, 'mic')) > 0) {
            streamMs = performance.now() - t0;
            return;
          }
        }
      })();
      await m.page.keyboard.down('Control');
      await sleep(100);
      const dMs = performance.now() - t0;
      await m.page.keyboard.press('KeyD');
      await m.page.keyboard.up('Control');
      await poll;
      return { stream_ms: streamMs, d_ms: dMs };
    };
    for (let i = 0; i < 2; i++) {
      await mute();
      await hotkey();
      await sleep(500);
    }
    const rows: {
      quick: boolean;
      since_ms: number;
      stream_ms: number | null;
      d_ms: number;
      sent_ms: number | null;
    }[] = [];
    let last = performance.now();
    for (let i = 0; i < 2 * CYCLES; i++) {
      const quick = i % 2 === 0;
      if (!quick) await sleep(3000);
      await mute();
      await m.page.evaluate('window.__unmutedAt = null');
      const sent = m.page.evaluate('__sent(4000, 50)') as Promise<{ ms: number } | null>;
      const since = performance.now() - last;
      const r = await hotkey();
      const s = await sent;
      last = performance.now();
      rows.push({ quick, since_ms: since, ...r, sent_ms: s?.ms ?? null });
      await sleep(200);
    }
    const of = (quick: boolean, k: 'stream_ms' | 'sent_ms') =>
      median(rows.filter((r) => r.quick === quick && r[k] !== null).map((r) => r[k] as number));
    const result = {
      quick: { stream_ms: of(true, 'stream_ms'), sent_ms: of(true, 'sent_ms') },
      slow: { stream_ms: of(false, 'stream_ms'), sent_ms: of(false, 'sent_ms') },
    };
    saveArtifact(`release-quick-reunmute-${audioServer}.json`, { ...result, rows });
    console.log(`release-quick-reunmute ${audioServer}: ${JSON.stringify(result)}`);
  } finally {
    await b.close();
    await x.stop();
    await rig.stop();
  }
});
