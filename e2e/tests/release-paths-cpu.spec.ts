// CPU bars for the pipeline and sender mutes, as release-cpu.spec.ts does for the disabled
// track: a rig of its own (no tone, no reader), two browsers on it (with and without the extension),
// alternated round by round, ratio of medians of 5 s windows (browser tree + audio server).
// Bars per kind (measured 2026-11-23, see docs/design/release-on-mute.md):
//   - sender_inactive: released <= 0.15 x unmuted with micoff. Its control is no control: without
//     micoff an inactive transceiver already stops the encoder (muted/unmuted 0.47), so only "muted with
//     micoff below muted without" is asserted for it.
//   - webaudio_pipeline: control >= 0.80 (the page's graph keeps its cost without micoff); released
//     misses 0.15 because the page's AudioContext keeps rendering (its thread and its playback stream)
//     whatever micoff does: asserted is that releasing saves what the capture costs (muted with micoff
//     below muted without by at least a quarter).
// Raw samples: e2e/artifacts/release-paths-cpu.json.
import { startAudioRig } from '../rig/audio-rig.ts';
import { extensionServiceWorker, type LaunchedChromium, launchChromium } from '../rig/chromium.ts';
import { expect, test } from '../rig/fixtures.ts';
import { extensionId, sampleCpu } from '../rig/host.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { HELPERS, PIPELINE, SENDER_INACTIVE } from './release-paths-util.ts';
import { chromiumStreams, median, saveArtifact, setReleaseSettings, whenStreams } from './release-util.ts';

const ROUNDS = Number(process.env.MICOFF_CPU_ROUNDS ?? 3);
const WINDOW_S = Number(process.env.MICOFF_CPU_WINDOW_S ?? 5);

type Config = 'with' | 'without';
/** How the page mutes: set up after the call is up, then mute. */
interface Kind {
  setup: string;
  mute: string;
  /** Released (muted with micoff) / unmuted with micoff, at most; null: not asserted. */
  released: number | null;
  /** Muted / unmuted without micoff, at least; null: not asserted. */
  control: number | null;
  /** Muted with micoff / muted without, at most. */
  saved: number;
}
const KINDS: Record<string, Kind> = {
  sender_inactive: { setup: HELPERS, mute: SENDER_INACTIVE, released: 0.15, control: null, saved: 0.75 },
  webaudio_pipeline: {
    setup: PIPELINE,
    mute: '__out.enabled = false',
    released: null,
    control: 0.8,
    saved: 0.75,
  },
};

test.skip(({ audioServer }) => audioServer !== 'pulseaudio', 'own PulseAudio rig: PulseAudio project only');

test('CPU: pipeline and sender mutes released vs unmuted, control without micoff', async ({ pages }) => {
  const kinds = Object.keys(KINDS);
  test.setTimeout(90_000 + kinds.length * (ROUNDS + 1) * 2 * (2 * WINDOW_S + 10) * 1000);
  const rig = await startAudioRig('pulseaudio', { reader: false, tone: false });
  const browsers: Partial<Record<Config, LaunchedChromium>> = {};
  try {
    browsers.with = await launchChromium({ env: rig.clientEnv });
    browsers.without = await launchChromium({ env: rig.clientEnv, withExtension: false });
    const sw = await extensionServiceWorker(browsers.with.context, extensionId());
    await setReleaseSettings(sw, { releaseOnMute: true, releaseDelayMs: 0, followPaths: true });
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
    const results: Record<string, unknown> = {};
    const failures: string[] = [];
    for (const kind of kinds) {
      const { setup, mute, released, control, saved } = KINDS[kind] as Kind;
      const samples: { round: number; config: Config; state: 'unmuted' | 'muted'; cpu_pct: number }[] = [];
      for (let round = -1; round < ROUNDS; round++) {
        const order: Config[] = Math.abs(round) % 2 ? ['without', 'with'] : ['with', 'without'];
        for (const config of order) {
          const b = browsers[config] as LaunchedChromium;
          const meeting = await MeetingPage.open(b.context, pages.url('meeting.html'));
          await meeting.ready();
          await meeting.page.evaluate(setup);
          await whenStreams(rig, 'capturing', (n) => n === 1);
          await new Promise((r) => setTimeout(r, 2000));
          samples.push({ round, config, state: 'unmuted', cpu_pct: await measure(config) });
          await meeting.page.evaluate(mute);
          if (config === 'with') await whenStreams(rig, `released (${kind})`, (n) => n === 0, 3000);
          else await new Promise((r) => setTimeout(r, 500));
          samples.push({ round, config, state: 'muted', cpu_pct: await measure(config) });
          await meeting.hangUp();
          await meeting.close();
          await whenStreams(rig, 'no capture between configurations', (n) => n === 0, 5000);
        }
      }
      const of = (config: Config, state: 'unmuted' | 'muted') =>
        median(
          samples
            .filter((s) => s.round >= 0 && s.config === config && s.state === state)
            .map((s) => s.cpu_pct),
        );
      const r = {
        median_cpu_pct: {
          withUnmuted: of('with', 'unmuted'),
          withMuted: of('with', 'muted'),
          withoutUnmuted: of('without', 'unmuted'),
          withoutMuted: of('without', 'muted'),
        },
        released_over_unmuted: of('with', 'muted') / of('with', 'unmuted'),
        control_muted_over_unmuted: of('without', 'muted') / of('without', 'unmuted'),
        muted_with_over_without: of('with', 'muted') / of('without', 'muted'),
        samples,
      };
      results[kind] = r;
      console.log(`release-paths-cpu ${kind}: ${JSON.stringify({ ...r, samples: undefined })}`);
      if (released !== null && r.released_over_unmuted > released)
        failures.push(`${kind}: released ${r.released_over_unmuted.toFixed(3)} > ${released}`);
      if (control !== null && r.control_muted_over_unmuted < control)
        failures.push(`${kind}: control ${r.control_muted_over_unmuted.toFixed(3)} < ${control}`);
      if (r.muted_with_over_without > saved)
        failures.push(`${kind}: muted with/without ${r.muted_with_over_without.toFixed(3)} > ${saved}`);
    }
    expect(await chromiumStreams(rig)).toEqual([]);
    saveArtifact('release-paths-cpu.json', { rounds: ROUNDS, window_s: WINDOW_S, results });
    expect(failures).toEqual([]);
  } finally {
    await browsers.with?.close();
    await browsers.without?.close();
    await rig.stop();
  }
});
