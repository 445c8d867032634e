// Issue 4 CPU bars, side by side in one run on a rig of their own (no tone, no reader: everything the
// audio server does is for Chromium's capture), two browsers on it, one with the extension and one
// without, alternated round by round:
//   - released: muted with micoff <= 15 % of unmuted with micoff
//   - control: muted without micoff >= 80 % of unmuted without micoff (the test measures something)
//   - overhead: unmuted with micoff <= 105 % of unmuted without micoff
// CPU = browser process tree + audio server, from `micoff-host sample --browser-pid --audio-server`.
// Raw samples: e2e/artifacts/release-cpu.json.
import { startAudioRig } from '../rig/audio-rig.ts';
import { extensionServiceWorker, type LaunchedChromium, launchChromium } from '../rig/chromium.ts';
import { expect, test } from '../rig/fixtures.ts';
import { extensionId, sampleCpu } from '../rig/host.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { chromiumStreams, median, saveArtifact, setReleaseSettings, whenStreams } from './release-util.ts';

const ROUNDS = Number(process.env.MICOFF_CPU_ROUNDS ?? 6);
const WINDOW_S = Number(process.env.MICOFF_CPU_WINDOW_S ?? 5);

type Config = 'with' | 'without';
interface Sample {
  round: number;
  config: Config;
  state: 'unmuted' | 'muted';
  cpu_pct: number;
}

test('CPU: released vs unmuted, control without micoff, overhead unmuted', async ({ pages }) => {
  test.setTimeout(60_000 + ROUNDS * 2 * (2 * WINDOW_S + 8) * 1000);
  const rig = await startAudioRig('pulseaudio', { reader: false, tone: false });
  const browsers: Partial<Record<Config, LaunchedChromium>> = {};
  try {
    browsers.with = await launchChromium({ env: rig.clientEnv });
    browsers.without = await launchChromium({ env: rig.clientEnv, withExtension: false });
    const sw = await extensionServiceWorker(browsers.with.context, extensionId());
    await setReleaseSettings(sw, { releaseOnMute: true, releaseDelayMs: 0 });
    const samples: Sample[] = [];
    const measure = async (config: Config) => {
      const b = browsers[config] as LaunchedChromium;
      const r = await sampleCpu({
        browserPid: await b.browserPid(),
        audioServer: true,
        windowS: WINDOW_S,
        env: rig.clientEnv,
      });
      return r.total_cpu_pct;
    };

    for (let round = 0; round < ROUNDS; round++) {
      const order: Config[] = round % 2 ? ['without', 'with'] : ['with', 'without'];
      for (const config of order) {
        const b = browsers[config] as LaunchedChromium;
        const meeting = await MeetingPage.open(b.context, pages.url('meeting.html'));
        await meeting.ready();
        await whenStreams(rig, 'capturing', (n) => n === 1);
        await new Promise((r) => setTimeout(r, 1000)); // settle after the call comes up
        samples.push({ round, config, state: 'unmuted', cpu_pct: await measure(config) });
        await meeting.mute();
        if (config === 'with') await whenStreams(rig, 'released', (n) => n === 0, 2000);
        else await new Promise((r) => setTimeout(r, 500));
        samples.push({ round, config, state: 'muted', cpu_pct: await measure(config) });
        await meeting.hangUp();
        await meeting.close();
        await whenStreams(rig, 'no capture between configurations', (n) => n === 0, 5000);
      }
    }
    expect(await chromiumStreams(rig)).toEqual([]);

    const of = (config: Config, state: Sample['state']) =>
      samples.filter((s) => s.config === config && s.state === state).map((s) => s.cpu_pct);
    const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
    const withUnmuted = mean(of('with', 'unmuted'));
    const withMuted = mean(of('with', 'muted'));
    const withoutUnmuted = mean(of('without', 'unmuted'));
    const withoutMuted = mean(of('without', 'muted'));
    const result = {
      rounds: ROUNDS,
      window_s: WINDOW_S,
      mean_cpu_pct: { withUnmuted, withMuted, withoutUnmuted, withoutMuted },
      median_cpu_pct: {
        withUnmuted: median(of('with', 'unmuted')),
        withMuted: median(of('with', 'muted')),
        withoutUnmuted: median(of('without', 'unmuted')),
        withoutMuted: median(of('without', 'muted')),
      },
      released_over_unmuted: withMuted / withUnmuted,
      control_muted_over_unmuted: withoutMuted / withoutUnmuted,
      overhead_with_over_without: withUnmuted / withoutUnmuted,
      samples,
    };
    saveArtifact('release-cpu.json', result);
    console.log(`release-cpu: ${JSON.stringify({ ...result, samples: undefined })}`);
    expect(result.released_over_unmuted).toBeLessThanOrEqual(0.15);
    expect(result.control_muted_over_unmuted).toBeGreaterThanOrEqual(0.8);
    expect(result.overhead_with_over_without).toBeLessThanOrEqual(1.05);
  } finally {
    await browsers.with?.close();
    await browsers.without?.close();
    await rig.stop();
  }
});
