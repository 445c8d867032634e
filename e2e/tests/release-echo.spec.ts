// Echo after an unmute, on the echo rig (echo-util.ts, its direct path: the browser's default sink is
// heard by the microphone; echo.html plays a far end's speech-like signal and
// sends the mic through a loopback call, so what the page SENDS is the far end's echo and what the
// browser's echo canceller leaves of it).
// Two browsers, one after the other and alternated over rounds: `micoff` (the extension releases the
// device while muted and reacquires it on the unmute: a fresh capture, a fresh echo canceller) and
// `plain` (no extension: the same `enabled` flip, the device and its canceller stay open). In each
// call: converge with the far end playing, then per unmute: mute (`enabled = false`), hold it past
// micoff's release delay, unmute, and read the sent echo second by second for AFTER_S seconds.
// Curves: per-second medians over the unmutes of each browser.
// Bar: once a fresh canceller has had its convergence time (SETTLED_FROM_S), micoff's median second
// at most 3 dB above plain's: the reacquired capture cancels echo again as well as the kept one (it
// would not if the reacquire lost echo cancellation or its constraints). The issue's bar (micoff's
// worst 3-s window at most 3 dB above plain's) is measured and logged, not asserted: a fresh canceller
// leaks in its first second, which is the cost of releasing (docs/design/release-on-mute.md, "Echo
// after an unmute"). Never an absolute level: the canceller's figures swing with the machine's load.
// Raw curves: e2e/artifacts/release-echo-<server>.json. PulseAudio project only in the suite (time).
// Wall time: ~60 s by default; MICOFF_ECHO_ROUNDS (default 1) and MICOFF_ECHO_UNMUTES (unmutes per
// call, default 1) make it a sweep (scripts/bench-echo.sh), MICOFF_ECHO_FINE_MS=100 runs the second
// test: the first 3 s after each unmute at that resolution.
import { DEFAULT_SETTINGS } from '../../extension/src/shared/settings.ts';
import { expect, test } from '../rig/fixtures.ts';
import type { MeetingPage } from '../rig/meeting-page.ts';
import { dB, type EchoConfig, openEchoCall, sentCurve, sentPerSecond, startEchoRig } from './echo-util.ts';
import { chromiumStreams, median, saveArtifact, whenStreams } from './release-util.ts';

const ROUNDS = Number(process.env.MICOFF_ECHO_ROUNDS ?? 1);
const UNMUTES = Number(process.env.MICOFF_ECHO_UNMUTES ?? 1);
const FINE_MS = Number(process.env.MICOFF_ECHO_FINE_MS ?? 0);
/** Far-end speech before the first mute: AEC3 converges within a few seconds. */
const CONVERGE_S = 8;
/** How long each mute lasts: 2 s past the default release delay, so micoff has released. */
const MUTED_MS = Number(process.env.MICOFF_ECHO_MUTED_MS ?? DEFAULT_SETTINGS.releaseDelayMs + 2000);
/** The issue's window after an unmute. */
const AFTER_S = 15;
/** The issue's bar window. */
const WINDOW_S = 3;
/** A fresh capture's canceller is back to its steady level ~3 s after the reacquire (the 100 ms
 * curves in release-on-mute.md); the bar compares the seconds after these (the 4th to the 15th). */
const SETTLED_FROM_S = 3;

const CONFIGS: EchoConfig[] = [
  { name: 'micoff', latencyMs: null, constraints: { audio: true }, withExtension: true },
  { name: 'plain', latencyMs: null, constraints: { audio: true }, withExtension: false },
];

/** The loudest `n`-second window of a per-second dB curve (energies averaged, not dB). */
function worstWindowDb(curve: number[], n: number): number {
  let worst = Number.NEGATIVE_INFINITY;
  for (let i = 0; i + n <= curve.length; i++) {
    const e = curve.slice(i, i + n).reduce((s, x) => s + 10 ** (x / 10), 0) / n;
    worst = Math.max(worst, dB(e));
  }
  return worst;
}

interface Unmute {
  round: number;
  config: string;
  unmute: number;
  /** Chromium record streams at the server at the end of the mute (0: micoff released). */
  streams_while_muted: number;
  /** The sent echo after the unmute: per second, or [ms, dB] at FINE_MS. */
  after: number[] | [number, number][];
}

/** `dB` of an interval with nothing sent: no sample, or only zeros. */
const SILENT_DB = dB(0);

/** The mechanism under test ran: micoff released the device while muted, plain kept it. */
function assertMechanism(unmutes: Unmute[]): void {
  for (const c of CONFIGS) expect(unmutes.some((u) => u.config === c.name)).toBe(true);
  for (const u of unmutes) {
    expect(u.streams_while_muted, `${u.config} round ${u.round} unmute ${u.unmute}`).toBe(
      u.config === 'micoff' ? 0 : 1,
    );
  }
}

/** Each configuration's calls, alternated over rounds: converge, then `UNMUTES` times mute for
 * MUTED_MS and measure the unmute with `measure`. */
async function runCalls(
  audioServer: 'pulseaudio' | 'pipewire',
  pages: Parameters<typeof openEchoCall>[1],
  measure: (call: MeetingPage) => Promise<Unmute['after']>,
): Promise<Unmute[]> {
  const rig = await startEchoRig(audioServer);
  const unmutes: Unmute[] = [];
  try {
    for (let round = 0; round < ROUNDS; round++) {
      const order = round % 2 ? [...CONFIGS].reverse() : CONFIGS;
      for (const c of order) {
        const { call, close } = await openEchoCall(rig, pages, c);
        try {
          await new Promise((r) => setTimeout(r, CONVERGE_S * 1000));
          for (let k = 0; k < UNMUTES; k++) {
            await call.mute();
            await new Promise((r) => setTimeout(r, MUTED_MS));
            const streams = (await chromiumStreams(rig)).length;
            const after = await measure(call);
            unmutes.push({ round, config: c.name, unmute: k, streams_while_muted: streams, after });
          }
          if (c.withExtension) await whenStreams(rig, 'micoff reacquired', (n) => n === 1);
        } finally {
          await close();
        }
      }
    }
  } finally {
    await rig.stop();
  }
  return unmutes;
}

test('echo after an unmute: the reacquired capture cancels echo again as the kept one does', async ({
  audioServer,
  pages,
}) => {
  test.skip(
    audioServer !== 'pulseaudio' && !process.env.MICOFF_ECHO_ROUNDS,
    'PulseAudio only in the suite (time); a sweep (MICOFF_ECHO_ROUNDS) runs on either',
  );
  test.setTimeout(60_000 + ROUNDS * CONFIGS.length * (15_000 + CONVERGE_S * 1000 + UNMUTES * 22_000));
  const unmutes = await runCalls(audioServer, pages, (call) =>
    sentPerSecond(call, AFTER_S, () => call.unmute()),
  );
  const of = (name: string) => unmutes.filter((u) => u.config === name);
  const curve = (name: string) =>
    Array.from({ length: AFTER_S }, (_, i) =>
      median(of(name).map((u) => (u.after as number[])[i] as number)),
    );
  const settled = (name: string) =>
    median(of(name).flatMap((u) => (u.after as number[]).slice(SETTLED_FROM_S)));
  const worst = (name: string) => worstWindowDb(curve(name), WINDOW_S);
  const result = {
    server: audioServer,
    rounds: ROUNDS,
    unmutes_per_call: UNMUTES,
    muted_ms: MUTED_MS,
    curve_db: Object.fromEntries(CONFIGS.map((c) => [c.name, curve(c.name).map((x) => Math.round(x))])),
    worst_window_db: Object.fromEntries(CONFIGS.map((c) => [c.name, worst(c.name)])),
    issue_bar_micoff_minus_plain_db: worst('micoff') - worst('plain'),
    settled_median_db: Object.fromEntries(CONFIGS.map((c) => [c.name, settled(c.name)])),
    settled_micoff_minus_plain_db: settled('micoff') - settled('plain'),
    unmutes,
  };
  saveArtifact(`release-echo-${audioServer}.json`, result);
  console.log(`release-echo: ${JSON.stringify({ ...result, unmutes: undefined })}`);
  assertMechanism(unmutes);
  expect(result.settled_micoff_minus_plain_db).toBeLessThanOrEqual(3);
});

test('echo after an unmute, first 3 s at MICOFF_ECHO_FINE_MS (benchmark)', async ({ audioServer, pages }) => {
  test.skip(!FINE_MS, 'a benchmark: set MICOFF_ECHO_FINE_MS (e.g. 100)');
  test.setTimeout(60_000 + ROUNDS * CONFIGS.length * (15_000 + CONVERGE_S * 1000 + UNMUTES * 10_000));
  const unmutes = await runCalls(audioServer, pages, async (call) => {
    const fine = await sentCurve(call, FINE_MS, 3000, () => call.unmute());
    await new Promise((r) => setTimeout(r, 2000));
    return fine.map(([t, db]) => [t, Math.round(db)] as [number, number]);
  });
  saveArtifact(`release-echo-fine-${audioServer}.json`, { server: audioServer, step_ms: FINE_MS, unmutes });
  for (const u of unmutes) console.log(`${u.config} ${u.unmute}: ${JSON.stringify(u.after)}`);
  // What the curves stand for (no level is asserted, as above): micoff released the device while
  // muted and plain kept it; every curve spans the 3 s, with at least half the samples its step asks
  // (stats calls slow down under load); and the page sends audio again in the last second of them (an
  // interval with no sample, or only the zeros of a disabled track, reads -120 dB: a capture that did
  // not come back reads so to the end).
  assertMechanism(unmutes);
  for (const u of unmutes) {
    const curve = u.after as [number, number][];
    const what = `${u.config} round ${u.round} unmute ${u.unmute}: ${JSON.stringify(curve)}`;
    expect(curve.length, what).toBeGreaterThanOrEqual(Math.floor(3000 / FINE_MS / 2));
    expect(curve.at(-1)?.[0], what).toBeGreaterThanOrEqual(3000 - FINE_MS);
    expect(
      curve.slice(-Math.ceil(1000 / FINE_MS)).every(([, db]) => db > SILENT_DB),
      `the page sends no audio in the last second of the 3 s: ${what}`,
    ).toBe(true);
  }
});
