// CPU bars for the pipeline and sender mutes (sender_inactive, webaudio_pipeline, insertable_pipeline),
// as release-cpu.spec.ts does for the disabled track: two rigs, with and without micoff, both calls
// sampled over the same windows; plus what the insertable stand-in costs while unmuted.
// Method, bar values and their measurements: docs/design/release-on-mute.md#release-paths-cpu-bars.
// MICOFF_CPU_KINDS=a,b runs only those kinds. Raw samples: e2e/artifacts/release-paths-cpu.json.
import { type AudioRig, startAudioRig } from '../rig/audio-rig.ts';
import { extensionServiceWorker, type LaunchedChromium, launchChromium } from '../rig/chromium.ts';
import { expect, test } from '../rig/fixtures.ts';
import { extensionId, sampleCpu } from '../rig/host.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { HELPERS, insertablePage, OUT_MUTE, PIPELINE, SENDER_INACTIVE } from './release-paths-util.ts';
import {
  balancedPairedWindows,
  chromiumStreams,
  median,
  onCpuPct,
  PAIRED_WINDOW_S,
  PAIRED_WINDOWS,
  pairedBreakdown,
  pairedWindows,
  RELEASED_ABOVE_FLOOR,
  saveArtifact,
  setReleaseSettings,
  whenStreams,
} from './release-util.ts';

const ROUNDS = Number(process.env.MICOFF_CPU_ROUNDS ?? 3);
const WINDOW_S = Number(process.env.MICOFF_CPU_WINDOW_S ?? 5);
/** The stand-in's cost while unmuted (paired with / without), at most
 * (docs/design/release-on-mute.md#release-paths-cpu-bar-values). */
const STAND_IN_BAR = 1.3;
/** The WebAudio pipeline muted, with / without micoff (paired windows, browser trees), at most: between
 * released and not released (docs/design/release-on-mute.md#release-paths-cpu-bar-values). */
const WEBAUDIO_SAVED_PAIRED = 0.85;
/** Paired windows for that bar (docs/design/release-on-mute.md#release-paths-cpu-bar-values says why
 * ten). */
const WEBAUDIO_PAIRED_WINDOWS = 10;

type Config = 'with' | 'without';
/** How the page mutes: set up after the call is up, then mute. */
interface Kind {
  /** The meeting page (e2e/pages/). */
  page: string;
  setup: string;
  mute: string;
  /** Released (muted with micoff) against the page's stopped track without micoff (the floor), asserted. */
  released: boolean;
  /** Muted / unmuted without micoff, at least; null: not asserted. */
  control: number | null;
  /** Muted with micoff / muted without, at most, from the sequential windows; null: not asserted. */
  saved: number | null;
  /** The same, from paired windows (both browsers' calls muted at once, both trees sampled over the
   * same windows): for a bar whose margin the sequential windows' noise would eat. */
  savedPaired?: number;
}
const KINDS: Record<string, Kind> = {
  sender_inactive: {
    page: 'meeting.html',
    setup: HELPERS,
    mute: SENDER_INACTIVE,
    released: true,
    control: null,
    saved: 0.75,
  },
  webaudio_pipeline: {
    page: 'meeting.html',
    setup: PIPELINE,
    mute: '__out.enabled = false',
    released: false,
    control: 0.8,
    saved: null,
    savedPaired: WEBAUDIO_SAVED_PAIRED,
  },
  insertable_pipeline: {
    page: insertablePage('worker', false),
    setup: '',
    mute: OUT_MUTE,
    released: true,
    control: 0.8,
    saved: 0.75,
  },
};
const only = process.env.MICOFF_CPU_KINDS?.split(',').filter(Boolean);

test.skip(({ audioServer }) => audioServer !== 'pulseaudio', 'own PulseAudio rig: PulseAudio project only');

test('CPU: pipeline and sender mutes released vs unmuted, control without micoff', async ({ pages }) => {
  const kinds = Object.keys(KINDS).filter((k) => !only || only.includes(k));
  const standIn = kinds.includes('insertable_pipeline');
  const pairedRuns = (standIn ? 1 : 0) + kinds.filter((k) => KINDS[k]?.savedPaired !== undefined).length;
  test.setTimeout(
    90_000 +
      (kinds.length * ROUNDS + 1) * (3 * WINDOW_S + 24) * 1000 +
      pairedRuns * (PAIRED_WINDOWS * (PAIRED_WINDOW_S + 2) + 60) * 1000,
  );
  // One rig per browser: each call has a source and a server of its own, as if alone on the machine.
  const rigs = {} as Record<Config, AudioRig>;
  const browsers: Partial<Record<Config, LaunchedChromium>> = {};
  try {
    rigs.with = await startAudioRig('pulseaudio', { reader: false, tone: false });
    rigs.without = await startAudioRig('pulseaudio', { reader: false, tone: false });
    browsers.with = await launchChromium({ env: rigs.with.clientEnv });
    browsers.without = await launchChromium({ env: rigs.without.clientEnv, withExtension: false });
    const sw = await extensionServiceWorker(browsers.with.context, extensionId());
    await setReleaseSettings(sw, { releaseOnMute: true, releaseDelayMs: 0, followPaths: true });
    const measure = async (config: Config) => {
      const b = browsers[config] as LaunchedChromium;
      const r = await sampleCpu({
        browserPid: await b.browserPid(),
        audioServer: true,
        windowS: WINDOW_S,
        env: rigs[config].clientEnv,
      });
      return onCpuPct(r);
    };
    /** Both browsers over the same window, the one whose sampler starts first alternating. */
    const measureBoth = async (round: number) => {
      const order: Config[] = Math.abs(round) % 2 ? ['without', 'with'] : ['with', 'without'];
      const [a, b] = await Promise.all(order.map((c) => measure(c)));
      return Object.fromEntries(order.map((c, k) => [c, k === 0 ? a : b])) as Record<Config, number>;
    };
    const configs: Config[] = ['with', 'without'];
    const results: Record<string, unknown> = {};
    const failures: string[] = [];
    for (const kind of kinds) {
      const { page, setup, mute, released, control, saved } = KINDS[kind] as Kind;
      type State = 'unmuted' | 'muted' | 'floor';
      const samples: { round: number; config: Config; state: State; cpu_pct: number }[] = [];
      // Round -1 warms both browsers up (first calls, JIT, the host's first replies), discarded: once,
      // before the first kind; the next kinds find both warm.
      for (let round = kind === kinds[0] ? -1 : 0; round < ROUNDS; round++) {
        const calls = {} as Record<Config, MeetingPage>;
        for (const config of configs) {
          const meeting = await MeetingPage.open(
            (browsers[config] as LaunchedChromium).context,
            pages.url(page),
          );
          calls[config] = meeting;
          await meeting.ready();
          if (setup) await meeting.page.evaluate(setup);
          await whenStreams(rigs[config], 'capturing', (n) => n === 1);
        }
        await new Promise((r) => setTimeout(r, 2000));
        const unmuted = await measureBoth(round);
        await Promise.all(configs.map((c) => calls[c].page.evaluate(mute)));
        await whenStreams(rigs.with, `released (${kind})`, (n) => n === 0, 3000);
        await new Promise((r) => setTimeout(r, 500));
        const muted = await measureBoth(round);
        // The floor: the page without micoff stops its track; micoff's side stays released.
        let floor: Record<Config, number> | null = null;
        if (released && round >= 0) {
          await calls.without.stopTrack();
          await whenStreams(rigs.without, `stopped (${kind})`, (n) => n === 0, 3000);
          await new Promise((r) => setTimeout(r, 500));
          floor = await measureBoth(round);
          expect((await chromiumStreams(rigs.with)).length, 'still released over the floor window').toBe(0);
        }
        for (const config of configs) {
          samples.push({ round, config, state: 'unmuted', cpu_pct: unmuted[config] });
          samples.push({ round, config, state: 'muted', cpu_pct: muted[config] });
          if (floor) samples.push({ round, config, state: 'floor', cpu_pct: floor[config] });
          await calls[config].hangUp();
          await calls[config].close();
          await whenStreams(rigs[config], 'no capture between rounds', (n) => n === 0, 5000);
        }
      }
      const of = (config: Config, state: State) =>
        median(
          samples
            .filter((s) => s.round >= 0 && s.config === config && s.state === state)
            .map((s) => s.cpu_pct),
        );
      const at = (round: number, config: Config, state: State) =>
        samples.find((s) => s.round === round && s.config === config && s.state === state)?.cpu_pct ?? NaN;
      const floorRounds = [...new Set(samples.filter((s) => s.state === 'floor').map((s) => s.round))];
      const floorDiffs = floorRounds.map(
        (round) => at(round, 'with', 'floor') - at(round, 'without', 'floor'),
      );
      const r = {
        median_cpu_pct: {
          withUnmuted: of('with', 'unmuted'),
          withMuted: of('with', 'muted'),
          withoutUnmuted: of('without', 'unmuted'),
          withoutMuted: of('without', 'muted'),
        },
        released_over_unmuted: of('with', 'muted') / of('with', 'unmuted'),
        /** The release bar: released above the page's stopped track without micoff (median of the
         * per-round differences), as a share of the unmuted call with micoff. */
        released_above_floor: released ? median(floorDiffs) / of('with', 'unmuted') : null,
        released_over_stopped: released ? of('with', 'floor') / of('without', 'floor') : null,
        stopped_over_unmuted: released ? of('without', 'floor') / of('without', 'unmuted') : null,
        control_muted_over_unmuted: of('without', 'muted') / of('without', 'unmuted'),
        muted_with_over_without: of('with', 'muted') / of('without', 'muted'),
        sequential_unmuted_with_over_without: of('with', 'unmuted') / of('without', 'unmuted'),
        samples,
      };
      results[kind] = r;
      // Each bar is written so that a figure that is not a number (a missing sample) fails it.
      console.log(`release-paths-cpu ${kind}: ${JSON.stringify({ ...r, samples: undefined })}`);
      if (r.released_above_floor !== null && !(r.released_above_floor <= RELEASED_ABOVE_FLOOR))
        failures.push(
          `${kind}: released above the stopped track ${r.released_above_floor.toFixed(3)} of unmuted > ${RELEASED_ABOVE_FLOOR}`,
        );
      if (control !== null && !(r.control_muted_over_unmuted >= control))
        failures.push(`${kind}: control ${r.control_muted_over_unmuted.toFixed(3)} < ${control}`);
      if (saved !== null && !(r.muted_with_over_without <= saved))
        failures.push(`${kind}: muted with/without ${r.muted_with_over_without.toFixed(3)} > ${saved}`);
    }
    for (const config of configs) expect(await chromiumStreams(rigs[config])).toEqual([]);

    for (const kind of kinds) {
      const { page, setup, mute, savedPaired } = KINDS[kind] as Kind;
      if (savedPaired === undefined) continue;
      // Muted with micoff (released) against muted without (still capturing): both calls up and muted
      // at once, each window sampling both browser trees over the same interval, the side that starts
      // first alternating (the audio servers are left out).
      const calls = {} as Record<Config, MeetingPage>;
      for (const config of configs) {
        const m = await MeetingPage.open((browsers[config] as LaunchedChromium).context, pages.url(page));
        await m.ready();
        if (setup) await m.page.evaluate(setup);
        calls[config] = m;
      }
      for (const config of configs)
        await whenStreams(rigs[config], 'both browsers capturing', (n) => n === 1);
      await new Promise((r) => setTimeout(r, 2000));
      await Promise.all(Object.values(calls).map((m) => m.page.evaluate(mute)));
      await whenStreams(rigs.with, `micoff released (${kind})`, (n) => n === 0, 3000);
      await whenStreams(rigs.without, 'the other still capturing', (n) => n === 1);
      await new Promise((r) => setTimeout(r, 1000));
      const pids = { with: await browsers.with.browserPid(), without: await browsers.without.browserPid() };
      const paired = await pairedWindows(rigs.with, pids, PAIRED_WINDOW_S, WEBAUDIO_PAIRED_WINDOWS);
      // Still so at the end: the comparison held over all windows.
      expect((await chromiumStreams(rigs.with)).length).toBe(0);
      expect((await chromiumStreams(rigs.without)).length).toBe(1);
      for (const m of Object.values(calls)) {
        await m.hangUp();
        await m.close();
      }
      for (const config of configs)
        await whenStreams(rigs[config], 'no capture after the paired windows', (n) => n === 0, 5000);
      const ratios = paired.map((p) => p.ratio);
      const r = {
        median_with_pct: median(paired.map((p) => p.with_pct)),
        median_without_pct: median(paired.map((p) => p.without_pct)),
        muted_with_over_without: median(ratios),
        ratio_range: [Math.min(...ratios), Math.max(...ratios)],
        paired,
      };
      results[`${kind}_muted_paired`] = r;
      console.log(`release-paths-cpu ${kind} muted, paired: ${JSON.stringify({ ...r, paired: undefined })}`);
      if (!(r.muted_with_over_without <= savedPaired))
        failures.push(
          `${kind}: muted with/without (paired) ${r.muted_with_over_without.toFixed(3)} > ${savedPaired}`,
        );
    }

    if (standIn) {
      // The stand-in's cost while unmuted: both insertable calls up at once, both trees sampled over the
      // same windows, half of them with each side's audio service the newer (balancedPairedWindows; the
      // audio servers are left out).
      const url = pages.url(KINDS.insertable_pipeline?.page ?? '');
      const launched = browsers as Record<Config, LaunchedChromium>;
      const standInCost = await balancedPairedWindows(
        {
          with: { browser: launched.with, env: rigs.with.clientEnv },
          without: { browser: launched.without, env: rigs.without.clientEnv },
        },
        {
          async up() {
            const c: Record<Config, MeetingPage> = {
              with: await MeetingPage.open(launched.with.context, url),
              without: await MeetingPage.open(launched.without.context, url),
            };
            await Promise.all([c.with.ready(), c.without.ready()]);
            for (const config of configs)
              await whenStreams(rigs[config], 'both browsers capturing', (n) => n === 1);
            await new Promise((r) => setTimeout(r, 2000));
            return c;
          },
          async down(c) {
            for (const config of configs) {
              await c[config].hangUp();
              await c[config].close();
              await whenStreams(rigs[config], 'no capture between the halves', (n) => n === 0, 5000);
            }
          },
        },
      );
      const { paired } = standInCost;
      for (const m of Object.values(standInCost.calls)) {
        await m.hangUp();
        await m.close();
      }
      const r = {
        median_with_pct: median(paired.map((p) => p.with_pct)),
        median_without_pct: median(paired.map((p) => p.without_pct)),
        /** Geometric mean of the two halves' medians (balancedPairedWindows). */
        stand_in_with_over_without: standInCost.ratio,
        halves: standInCost.halves,
        plain_median: median(paired.map((p) => p.ratio)),
        breakdown: pairedBreakdown(paired),
        paired,
      };
      results.insertable_stand_in_unmuted = r;
      console.log(
        `release-paths-cpu insertable stand-in, unmuted: ${JSON.stringify({ ...r, paired: undefined })}`,
      );
      if (!(r.stand_in_with_over_without <= STAND_IN_BAR))
        failures.push(
          `stand-in unmuted with/without ${r.stand_in_with_over_without.toFixed(3)} > ${STAND_IN_BAR}`,
        );
    }
    saveArtifact('release-paths-cpu.json', { rounds: ROUNDS, window_s: WINDOW_S, results });
    expect(failures).toEqual([]);
  } finally {
    await browsers.with?.close();
    await browsers.without?.close();
    for (const r of Object.values(rigs)) await r.stop();
  }
});
