// micoff's part of a muted call in Debian's Firefox ESR, both servers (page/firefox/quiet.ts): after
// Firefox's own release, micoff takes the call's senders off the wire invisibly to the page and puts
// them back at the unmute. The CPU bars here (three Firefoxes, each on a server of its own, sampled
// over the same windows); the page's, the popup's and
// the far end's view after each unmute in firefox-quiet-unmute.spec.ts (the timing lane).
// Method, bar values and their measurements: docs/design/firefox-install.md#firefox-quiet-bars.
// Raw samples: e2e/artifacts/firefox-quiet-cpu-<server>.json.

import { QUIET_HOLD_MS } from '../../extension/src/shared/firefox-release.ts';
import { type AudioRig, type AudioServerKind, startAudioRig } from '../rig/audio-rig.ts';
import { firefoxMissing, type LaunchedFirefox, launchFirefox } from '../rig/firefox.ts';
import { expect, test } from '../rig/fixtures.ts';
import { sampleCpu } from '../rig/host.ts';
import { need } from '../rig/needs.ts';
import { waitFor } from '../rig/proc.ts';
import { DELAY_MS, firefoxRecords, micoffDelay, openCall, sentOver } from './firefox-quiet-util.ts';
import { byProcess, median, onCpuPct, saveArtifact } from './release-util.ts';

const ROUNDS = Number(process.env.MICOFF_CPU_ROUNDS ?? 5);
const WINDOW_S = Number(process.env.MICOFF_CPU_WINDOW_S ?? 6);
/** Muted with Firefox's release and micoff ÷ muted as Firefox comes, at most
 * (docs/design/firefox-install.md#firefox-quiet-bar-values, also for why not 0.35 / 0.80). */
const RELEASED_BAR = 0.5;
/** micoff ÷ Firefox's release alone, at most (docs/design/firefox-install.md#firefox-quiet-bar-values). */
const MICOFF_PART_BAR = 0.75;
/** The socket process while micoff holds the senders empty ÷ the same process with Firefox's release
 * alone in the same run, at most: a ratio, as every CPU bar, since the absolute figure follows the
 * machine (docs/design/firefox-install.md#firefox-quiet-bar-values). */
const SOCKET_QUIET_OVER_PREF = 0.25;
/** When the released configurations are measured, from the mute: past micoff's hold, and on PipeWire
 * past the idle source's suspend too (WirePlumber's, 5 s after the capture left, a burst); the
 * PulseAudio rig loads no suspend-on-idle module. */
const settledMs = (server: AudioServerKind) =>
  server === 'pipewire' ? Math.max(QUIET_HOLD_MS + 500, 7500) : QUIET_HOLD_MS + 500;

test('Firefox ESR: muted with Firefox’s release and micoff costs at most 0.50 of muted, 0.75 of Firefox’s release alone', async ({
  audioServer,
  pages,
}) => {
  need(firefoxMissing());
  const SETTLED_MS = settledMs(audioServer);
  test.setTimeout(90_000 + (ROUNDS + 1) * (WINDOW_S * 1000 + SETTLED_MS + 20_000));
  type Config = 'muted' | 'pref' | 'micoff';
  const configs: Config[] = ['muted', 'pref', 'micoff'];
  // One rig per browser (each call a server of its own, as if alone on the machine), all three sampled
  // over the same windows: the neighbour's load falls on every configuration alike.
  const rigs: Partial<Record<Config, AudioRig>> = {};
  const ff: Partial<Record<Config, LaunchedFirefox>> = {};
  try {
    for (const c of configs) rigs[c] = await startAudioRig(audioServer, { reader: false, tone: false });
    const rig = (c: Config) => rigs[c] as AudioRig;
    const release = { delayMs: DELAY_MS, installer: true };
    // As Firefox comes; with its release (the installer's user.js); with its release and micoff.
    ff.muted = await launchFirefox({ env: rig('muted').clientEnv, withExtension: false });
    ff.pref = await launchFirefox({
      env: rig('pref').clientEnv,
      nativeRelease: release,
      withExtension: false,
    });
    ff.micoff = await launchFirefox({ env: rig('micoff').clientEnv, nativeRelease: release });
    await micoffDelay(ff.micoff);

    const samples: { round: number; config: Config; cpu_pct: number; by_process: Record<string, number> }[] =
      [];
    for (let round = -1; round < ROUNDS; round++) {
      const order = round % 2 ? [...configs].reverse() : configs;
      const calls = {} as Record<Config, Awaited<ReturnType<typeof openCall>>>;
      for (const c of order) calls[c] = await openCall(ff[c] as LaunchedFirefox, rig(c), pages);
      if (round < 0) {
        // Warm-up: each browser's first call (page load, JIT) is not measured.
        for (const c of order) await calls[c].close();
        continue;
      }
      await new Promise((r) => setTimeout(r, 1000)); // the calls settle, the devices on past the delay
      const mutedAt = Date.now();
      await Promise.all(order.map((c) => calls[c].mute()));
      for (const c of ['pref', 'micoff'] as const) {
        await waitFor(
          `Firefox’s release (${c})`,
          async () => ((await firefoxRecords(rig(c))) === 0 ? true : null),
          {
            timeoutMs: DELAY_MS + 5000,
          },
        );
      }
      // Firefox releases at the mute, micoff takes the sender off the hold after it (no extension page is
      // opened to ask: one costs CPU of its own). Every configuration is measured from the same moment,
      // past the hold and past the idle source's suspend (wireplumber's, 5 s after the capture left, a
      // burst at PipeWire).
      await new Promise((r) => setTimeout(r, Math.max(0, mutedAt + SETTLED_MS - Date.now())));
      expect(await sentOver(calls.micoff.page, 1000), 'micoff: no packets once quiet').toBeLessThanOrEqual(2);
      const reports = await Promise.all(
        order.map((c) =>
          sampleCpu({
            browserPid: (ff[c] as LaunchedFirefox).pid,
            audioServer: true,
            windowS: WINDOW_S,
            env: rig(c).clientEnv,
          }),
        ),
      );
      order.forEach((c, k) => {
        const r = reports[k] as Parameters<typeof onCpuPct>[0];
        samples.push({ round, config: c, cpu_pct: onCpuPct(r), by_process: byProcess(r) });
      });
      for (const c of ['pref', 'micoff'] as const) {
        expect(await firefoxRecords(rig(c)), `Firefox’s capture stays closed while muted (${c})`).toBe(0);
      }
      for (const c of order) {
        await calls[c].hangUp();
        await calls[c].close();
        await waitFor(`no capture between rounds (${c})`, async () =>
          (await firefoxRecords(rig(c))) === 0 ? true : null,
        );
      }
    }
    const at = (round: number, c: Config) =>
      samples.find((s) => s.round === round && s.config === c)?.cpu_pct ?? Number.NaN;
    const med = (c: Config) => median(samples.filter((s) => s.config === c).map((s) => s.cpu_pct));
    /** A process's median per configuration (its role:comm key, as byProcess names it). */
    const medProcess = (c: Config, key: string) =>
      median(samples.filter((s) => s.config === c).map((s) => s.by_process[key] ?? 0));
    const SOCKET = 'socket:Socket Process';
    const result = {
      server: audioServer,
      rounds: ROUNDS,
      window_s: WINDOW_S,
      median_cpu_pct: { muted: med('muted'), pref: med('pref'), micoff: med('micoff') },
      released_over_muted: med('micoff') / med('muted'),
      /** The same from each round's windows (all three sampled at once): reported beside it. */
      released_over_muted_per_round: [...new Set(samples.map((s) => s.round))].map(
        (round) => at(round, 'micoff') / at(round, 'muted'),
      ),
      control_pref_over_muted: med('pref') / med('muted'),
      micoff_over_pref: med('micoff') / med('pref'),
      socket_process_pct: { pref: medProcess('pref', SOCKET), micoff: medProcess('micoff', SOCKET) },
      load_average: (await import('node:os')).loadavg(),
      samples,
    };
    saveArtifact(`firefox-quiet-cpu-${audioServer}.json`, result);
    console.log(`firefox-quiet cpu: ${JSON.stringify({ ...result, samples: undefined })}`);
    expect(result.released_over_muted).toBeLessThanOrEqual(RELEASED_BAR);
    expect(result.micoff_over_pref, 'control: micoff against Firefox’s release alone').toBeLessThanOrEqual(
      MICOFF_PART_BAR,
    );
    // The part of the floor that does not move with the load: the socket process, which sends the RTP,
    // is idle once micoff took the senders off the wire (docs/design/firefox-install.md#firefox-quiet-bar-values).
    expect(
      result.socket_process_pct.micoff / result.socket_process_pct.pref,
      'the socket process while quiet, against Firefox’s release alone',
    ).toBeLessThanOrEqual(SOCKET_QUIET_OVER_PREF);
  } finally {
    for (const b of Object.values(ff)) await b?.close();
    for (const r of Object.values(rigs)) await r?.stop();
  }
});
