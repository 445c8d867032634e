// Echo after an unmute, on the echo rig (echo-util.ts): micoff (released while muted, reacquired: a
// fresh echo canceller) against the plain flip, alternated; after each unmute (`intent` and `sudden`)
// the sent echo is read second by second and compared, never as an absolute level.
// Method and bars: docs/design/release-on-mute.md#echo-after-an-unmute-spec.
// MICOFF_ECHO_ROUNDS / MICOFF_ECHO_UNMUTES make it a sweep (scripts/bench-echo.sh); MICOFF_ECHO_FINE_MS=100
// runs the fine-grained second test. Raw curves: e2e/artifacts/release-echo-<server>.json.

import { MIC } from '../rig/audio-rig.ts';
import { extensionServiceWorker } from '../rig/chromium.ts';
import { expect, test } from '../rig/fixtures.ts';
import { extensionId } from '../rig/host.ts';
import type { MeetingPage } from '../rig/meeting-page.ts';
import { recordLevel } from '../rig/source-level.ts';
import {
  dB,
  type EchoConfig,
  MIC_ECHO_MIN_DB,
  openEchoCall,
  SUPPRESSED_BELOW_MIC_DB,
  sentCurve,
  sentPerSecond,
  startEchoRig,
} from './echo-util.ts';
import { chromiumStreams, median, saveArtifact, setReleaseSettings, whenStreams } from './release-util.ts';

const ROUNDS = Number(process.env.MICOFF_ECHO_ROUNDS ?? 1);
const UNMUTES = Number(process.env.MICOFF_ECHO_UNMUTES ?? 3);
/** When the first UNMUTES per kind and call miss a bar, this many more of each (in a fresh call per
 * browser) settle it, and every bar is judged again on all of them: either browser's canceller lets a
 * burst of echo through at random seconds on a loaded machine, and a median of three per second takes
 * two such bursts for a leak (docs/design/release-on-mute.md#echo-after-an-unmute-spec). */
const MORE_UNMUTES = Number(process.env.MICOFF_ECHO_MORE_UNMUTES ?? 2);
const KINDS = ['intent', 'sudden'] as const;
type Kind = (typeof KINDS)[number];
/** How long the pointer rests on the unmute button before the click (the issue's >= 1 s). */
const INTENT_LEAD_MS = 1000;
/** The bars: micoff's worst 3-s window at most this far above plain's. */
const BAR_DB: Record<Kind, number> = { intent: 6, sudden: 15 };
const FINE_MS = Number(process.env.MICOFF_ECHO_FINE_MS ?? 0);
/** Far-end speech before the first mute: AEC3 converges within a few seconds. */
const CONVERGE_S = 8;
/** How long each mute lasts: micoff releases at once (delay 0); long enough to be released for a while. */
const MUTED_MS = Number(process.env.MICOFF_ECHO_MUTED_MS ?? 2000);
/** The window after an unmute. */
const AFTER_S = 15;
/** The bar window. */
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
  kind: Kind;
  unmute: number;
  /** Chromium record streams at the server at the end of the mute (0: micoff released). */
  streams_while_muted: number;
  /** The sent echo after the unmute: per second, or [ms, dB] at FINE_MS. */
  after: number[] | [number, number][];
}

/** Within the bar, or cancelled: at least SUPPRESSED_BELOW_MIC_DB below the echo at the microphone,
 * AEC3's own output floor, whose level moves by 12 dB between runs (-72..-84 dB for the plain flip's
 * worst window), where "6 dB above the plain flip" compares two floors (capture-latency-aec's rule;
 * docs/design/release-on-mute.md#echo-after-an-unmute-spec). */
export function echoWithin(o: { micoffDb: number; plainDb: number; barDb: number; micDb: number }): boolean {
  return o.micDb - o.micoffDb >= SUPPRESSED_BELOW_MIC_DB || o.micoffDb - o.plainDb <= o.barDb;
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

/** The page's unmute button clicked as a person does: the pointer rests on it `leadMs`, then a press. */
async function clickUnmute(call: MeetingPage, leadMs: number): Promise<void> {
  const box = await call.page.locator('#unmute').boundingBox();
  if (!box) throw new Error('no unmute button');
  await call.page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 4 });
  await new Promise((r) => setTimeout(r, leadMs));
  await call.page.mouse.down();
  await new Promise((r) => setTimeout(r, 100));
  await call.page.mouse.up();
}

/** Each configuration's calls, alternated over rounds: converge, teach the unmute button, then
 * `perKind` times each kind (interleaved): mute for MUTED_MS and measure the unmute with `measure`. */
async function runCalls(
  audioServer: 'pulseaudio' | 'pipewire',
  pages: Parameters<typeof openEchoCall>[1],
  measure: (call: MeetingPage, unmute: () => Promise<unknown>) => Promise<Unmute['after']>,
  micDbs: number[] = [],
  perKind = UNMUTES,
  rounds: { from: number; count: number } = { from: 0, count: ROUNDS },
): Promise<Unmute[]> {
  const rig = await startEchoRig(audioServer);
  const unmutes: Unmute[] = [];
  try {
    for (let round = rounds.from; round < rounds.from + rounds.count; round++) {
      const order = round % 2 ? [...CONFIGS].reverse() : CONFIGS;
      for (const c of order) {
        const { call, close, browser } = await openEchoCall(rig, pages, c);
        try {
          if (c.withExtension) {
            const sw = await extensionServiceWorker(browser.context, extensionId());
            await setReleaseSettings(sw, { releaseOnMute: true, releaseDelayMs: 0 });
          }
          // The echo at the microphone while the canceller converges (the far end speaks throughout).
          const heard = recordLevel(rig, MIC);
          await new Promise((r) => setTimeout(r, CONVERGE_S * 1000));
          micDbs.push((await heard.stop()).db);
          // Teach the unmute button (micoff learns it from the first click unmute), then converge again.
          await call.mute();
          await new Promise((r) => setTimeout(r, MUTED_MS));
          await clickUnmute(call, 100);
          await call.page.mouse.move(600, 500);
          await new Promise((r) => setTimeout(r, 4000));
          for (let k = 0; k < perKind; k++) {
            for (const kind of k % 2 ? [...KINDS].reverse() : KINDS) {
              await call.mute();
              await call.page.mouse.move(600, 500);
              await new Promise((r) => setTimeout(r, MUTED_MS));
              const streams = (await chromiumStreams(rig)).length;
              const after = await measure(call, () =>
                kind === 'intent' ? clickUnmute(call, INTENT_LEAD_MS) : call.unmute(),
              );
              unmutes.push({ round, config: c.name, kind, unmute: k, streams_while_muted: streams, after });
            }
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

interface KindVerdict {
  curve_db: Record<string, number[]>;
  worst_window_db: Record<string, number>;
  micoff_minus_plain_db: number;
  micoff_below_mic_db: number;
  bar_db: number;
  within: boolean;
}

/** The bars on a set of unmutes: per kind, the per-second medians' worst 3-s windows; and the settled
 * median second. `micDb` is the quieter call's echo at the mic (the floor rule asks the most of it). */
function judge(unmutes: Unmute[], micDb: number) {
  const of = (name: string, kind: Kind) => unmutes.filter((u) => u.config === name && u.kind === kind);
  const curve = (name: string, kind: Kind) =>
    Array.from({ length: AFTER_S }, (_, i) =>
      median(of(name, kind).map((u) => (u.after as number[])[i] as number)),
    );
  const settled = (name: string) =>
    median(
      unmutes.filter((u) => u.config === name).flatMap((u) => (u.after as number[]).slice(SETTLED_FROM_S)),
    );
  const worst = (name: string, kind: Kind) => worstWindowDb(curve(name, kind), WINDOW_S);
  const byKind = Object.fromEntries(
    KINDS.map((kind): [Kind, KindVerdict] => [
      kind,
      {
        curve_db: Object.fromEntries(
          CONFIGS.map((c) => [c.name, curve(c.name, kind).map((x) => Math.round(x))]),
        ),
        worst_window_db: Object.fromEntries(CONFIGS.map((c) => [c.name, worst(c.name, kind)])),
        micoff_minus_plain_db: worst('micoff', kind) - worst('plain', kind),
        micoff_below_mic_db: micDb - worst('micoff', kind),
        bar_db: BAR_DB[kind],
        within: echoWithin({
          micoffDb: worst('micoff', kind),
          plainDb: worst('plain', kind),
          barDb: BAR_DB[kind],
          micDb,
        }),
      },
    ]),
  ) as Record<Kind, KindVerdict>;
  const settledDb = Object.fromEntries(CONFIGS.map((c) => [c.name, settled(c.name)])) as Record<
    string,
    number
  >;
  const micoffSettled = settledDb.micoff as number;
  const settledWithin = echoWithin({
    micoffDb: micoffSettled,
    plainDb: settledDb.plain as number,
    barDb: 3,
    micDb,
  });
  return {
    unmutes_per_kind_and_call: unmutes.length / (CONFIGS.length * KINDS.length),
    by_kind: byKind,
    settled_median_db: settledDb,
    settled_micoff_minus_plain_db: micoffSettled - (settledDb.plain as number),
    settled_below_mic_db: micDb - micoffSettled,
    settled_within: settledWithin,
    within: settledWithin && KINDS.every((k) => byKind[k].within),
  };
}

test('echo after an unmute: within 6 dB of the plain flip after a sign of intent, 15 dB with no warning', async ({
  audioServer,
  pages,
}) => {
  test.skip(
    audioServer !== 'pulseaudio' && !process.env.MICOFF_ECHO_ROUNDS,
    'PulseAudio only in the suite (time); a sweep (MICOFF_ECHO_ROUNDS) runs on either',
  );
  const callsMs = (rounds: number, perKind: number) =>
    rounds * CONFIGS.length * (25_000 + CONVERGE_S * 1000 + perKind * KINDS.length * 22_000);
  test.setTimeout(60_000 + callsMs(ROUNDS, UNMUTES) + callsMs(1, MORE_UNMUTES));
  const micDbs: number[] = [];
  const measure = (call: MeetingPage, unmute: () => Promise<unknown>) => sentPerSecond(call, AFTER_S, unmute);
  let unmutes = await runCalls(audioServer, pages, measure, micDbs);
  assertMechanism(unmutes);
  const first = judge(unmutes, Math.min(...micDbs));
  if (!first.within && MORE_UNMUTES > 0) {
    unmutes = unmutes.concat(
      await runCalls(audioServer, pages, measure, micDbs, MORE_UNMUTES, { from: ROUNDS, count: 1 }),
    );
  }
  // The quieter call's echo at the mic: the floor rule asks the most of micoff's sent level.
  const micDb = Math.min(...micDbs);
  const verdict = first.within ? first : judge(unmutes, micDb);
  const result = {
    server: audioServer,
    rounds: ROUNDS,
    more_unmutes: first.within ? 0 : MORE_UNMUTES,
    muted_ms: MUTED_MS,
    intent_lead_ms: INTENT_LEAD_MS,
    mic_db: micDbs,
    ...verdict,
    first_unmutes: first.within ? undefined : { ...first },
    unmutes,
  };
  saveArtifact(`release-echo-${audioServer}.json`, result);
  console.log(`release-echo: ${JSON.stringify({ ...result, unmutes: undefined })}`);
  assertMechanism(unmutes);
  // There was an echo to cancel: loud at the microphone in every call.
  for (const db of micDbs) expect(db, 'the echo at the microphone').toBeGreaterThanOrEqual(MIC_ECHO_MIN_DB);
  for (const kind of KINDS) {
    const k = verdict.by_kind[kind];
    expect(
      k.within,
      `${kind}: micoff's worst 3-s window ${k.micoff_minus_plain_db.toFixed(1)} dB above plain's (bar ` +
        `${k.bar_db}) and only ${k.micoff_below_mic_db.toFixed(1)} dB below the echo at the mic (floor ` +
        `${SUPPRESSED_BELOW_MIC_DB}), over ${verdict.unmutes_per_kind_and_call} unmutes per kind and browser`,
    ).toBe(true);
  }
  expect(
    verdict.settled_within,
    `settled: micoff ${verdict.settled_micoff_minus_plain_db.toFixed(1)} dB above plain (bar 3), ` +
      `${verdict.settled_below_mic_db.toFixed(1)} dB below the echo at the mic`,
  ).toBe(true);
});

test('echo after an unmute, first 3 s at MICOFF_ECHO_FINE_MS (benchmark)', async ({ audioServer, pages }) => {
  test.skip(!FINE_MS, 'a benchmark: set MICOFF_ECHO_FINE_MS (e.g. 100)');
  test.setTimeout(60_000 + ROUNDS * CONFIGS.length * (15_000 + CONVERGE_S * 1000 + UNMUTES * 10_000));
  const unmutes = await runCalls(audioServer, pages, async (call, unmute) => {
    const fine = await sentCurve(call, FINE_MS, 3000, unmute);
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
