// Faults mid-call in Debian's Firefox ESR, both servers: the faults of faults.spec.ts that Firefox meets
// the same way (the audio server killed and restarted, pipewire-pulse restarted alone, stopped 30 s
// and 3 s, the capture device gone and back, micoff-host killed), each while the microphone is released
// and while it is unmuted; micoff's Firefox
// (Firefox's own release set by the installer, micoff's quiet part) against the plain flip's (Firefox as
// it comes: the page's `enabled` flip, the device kept open), both on one private rig. Per cell and call:
// the page's track, how long until the far end hears the user again, whether a mute after it releases
// the device again, what micoff-host leaves at the server, the settings. Firefox has no capture watch
// (`MediaStreamTrack.stats` is Chromium's), so these cells say what Firefox gives. Bars and the table:
// docs/design/faults.md, "Firefox".
// Raw outcomes: e2e/artifacts/firefox-faults-<project>.json (one entry per cell, merged across tests).
import type { Page } from 'puppeteer-core';
import {
  type AudioRig,
  type AudioRigOptions,
  type AudioServerKind,
  SIGNAL_SINK,
  startAudioRig,
} from '../rig/audio-rig.ts';
import { isInTree } from '../rig/chromium.ts';
import { firefoxMissing, type LaunchedFirefox, launchFirefox } from '../rig/firefox.ts';
import { expect, test } from '../rig/fixtures.ts';
import type { MeetingPage } from '../rig/meeting-page.ts';
import { need } from '../rig/needs.ts';
import { isFirefox } from '../rig/pactl.ts';
import type { PageServer } from '../rig/page-server.ts';
import { waitFor } from '../rig/proc.ts';
import {
  audioBack,
  CONFIGS,
  type Config,
  cellInRun,
  cellSkipped,
  deviceGoneAndBack,
  HICCUP_MS,
  hostAtServer,
  type InSuite,
  type Judged,
  judge,
  killHost,
  leftBehind,
  type Outcome,
  pause,
  pidsOf,
  pipewirePulseRestarted,
  RANK,
  RECORD_TRACK_EVENTS,
  record,
  SAME_MS,
  STOPPED_MS,
  serverKilledAndRestarted,
  stopServer,
  suspendedSinks,
} from './faults-util.ts';
import { DELAY_MS, micoffDelay, openCall } from './firefox-quiet-util.ts';

interface Call {
  config: Config;
  ff: LaunchedFirefox;
  m: MeetingPage<Page>;
}

interface Fault {
  name: string;
  /** Its cells in npm test (faults-util.ts `InSuite`); none when unset. */
  suite?: InSuite;
  /** Where the fault exists (default: both servers). */
  servers?: readonly AudioServerKind[];
  rigOptions?: AudioRigOptions;
  inject(rig: AudioRig, calls: Record<Config, Call>, extra: Record<string, unknown>): Promise<void>;
}

const FAULTS: Fault[] = [
  {
    name: 'audio server killed and restarted',
    // The host's sink waker for Firefox's output (PulseAudio's idle null sink).
    suite: { states: ['unmuted'], servers: ['pulseaudio'] },
    inject: (rig) => serverKilledAndRestarted(rig),
  },
  {
    name: 'micoff-host killed',
    inject: async (_rig, calls, extra) => {
      const pids = await pidsOf('micoff-host', calls.micoff.ff.pid);
      if (pids.length === 0) throw new Error('no micoff-host under the micoff Firefox');
      extra.host_new_after_ms = await killHost(calls.micoff.ff.pid, pids);
    },
  },
  {
    name: 'pipewire-pulse restarted',
    servers: ['pipewire'],
    rigOptions: { devicesInPipeWire: true },
    inject: (rig) => pipewirePulseRestarted(rig),
  },
  { name: 'capture device gone and back', inject: (rig) => deviceGoneAndBack(rig) },
  { name: `audio server stopped ${STOPPED_MS / 1000} s`, inject: (rig) => stopServer(rig, STOPPED_MS) },
  { name: `audio server stopped ${HICCUP_MS / 1000} s`, inject: (rig) => stopServer(rig, HICCUP_MS) },
];

/** Both calls: micoff's Firefox with Firefox's release as micoff's installer sets it (and micoff's
 * delay to match), the plain Firefox as it comes. */
async function openCalls(rig: AudioRig, pages: PageServer): Promise<Record<Config, Call>> {
  const calls: Partial<Record<Config, Call>> = {};
  try {
    for (const config of CONFIGS) {
      const ff =
        config === 'micoff'
          ? await launchFirefox({ env: rig.clientEnv, nativeRelease: { delayMs: DELAY_MS, installer: true } })
          : await launchFirefox({ env: rig.clientEnv, withExtension: false });
      calls[config] = { config, ff, m: undefined as unknown as MeetingPage<Page> };
      if (config === 'micoff') await micoffDelay(ff);
      const m = await openCall(ff, rig, pages, '?playout=1');
      (calls[config] as Call).m = m;
      await m.waitForAudioFlowing();
      await m.page.evaluate(RECORD_TRACK_EVENTS);
    }
    return calls as Record<Config, Call>;
  } catch (e) {
    for (const c of Object.values(calls)) await c?.ff.close().catch(() => {});
    throw e;
  }
}

/** The call's capture streams at the audio server (its Firefox's, by process tree). */
async function streamsOf(rig: AudioRig, c: Call): Promise<number[]> {
  return (await rig.recordStreams())
    .filter((s) => isFirefox(s) && s.processId !== null && isInTree(s.processId, c.ff.pid))
    .map((s) => s.index);
}

/** The call as `judge` reads it. */
function judged(rig: AudioRig, c: Call): Judged {
  return {
    m: c.m,
    events: async () => (await c.m.page.evaluate('window.__events')) as string[],
    streams: () => streamsOf(rig, c),
  };
}

/** The user's settings as micoff's background holds them, to check nothing is lost. */
async function storedSettings(c: Call): Promise<string> {
  const page = await c.ff.openExtensionPage('options.html');
  try {
    return await page.evaluate(async () => {
      const runtime = (
        globalThis as unknown as { browser: { runtime: { getBackgroundPage(): Promise<unknown> } } }
      ).browser.runtime;
      const bg = (await runtime.getBackgroundPage()) as {
        micoff: { settings: { get(): Promise<unknown> } };
      };
      return JSON.stringify(await bg.micoff.settings.get());
    });
  } finally {
    await page.close();
  }
}

/** Firefox gives its capture back this long after the unmute at most, in a released cell that no fault
 * touched (its own reopen, measured in firefox-quiet-unmute.spec.ts). */
const RELEASE_WAIT_MS = DELAY_MS + 5000;

// npm test runs the cells a fault's `suite` names; `npm run test:faults` (MICOFF_FAULTS=1) runs all ten
// on PulseAudio and twelve on PipeWire (docs/design/faults.md).
for (const fault of FAULTS) {
  for (const state of ['released', 'unmuted'] as const) {
    if (!cellInRun(fault.suite, state)) continue;
    test(`Firefox fault: ${fault.name}, while ${state}`, async ({ audioServer, pages }) => {
      need(firefoxMissing());
      const skipped = cellSkipped(fault.suite, audioServer);
      test.skip(skipped !== null, `${fault.name}: ${skipped}`);
      test.skip(
        fault.servers !== undefined && !fault.servers.includes(audioServer),
        `${fault.name}: ${fault.servers?.join(', ')} only`,
      );
      test.setTimeout(STOPPED_MS + 150_000);
      const rig = await startAudioRig(audioServer, { reader: false, tone: false, ...fault.rigOptions });
      let calls: Record<Config, Call> | undefined;
      const outcomes: Outcome[] = [];
      const extra: Record<string, unknown> = {};
      try {
        await rig.playInto(SIGNAL_SINK, 'speech');
        calls = await openCalls(rig, pages);
        const c = calls;
        const settingsBefore = await storedSettings(c.micoff);
        extra.host_at_server_before = await hostAtServer(rig);
        extra.host_processes_before = (await pidsOf('micoff-host', c.micoff.ff.pid)).length;
        if (state === 'released') {
          for (const k of CONFIGS) await c[k].m.mute();
          await waitFor(
            "micoff's Firefox released the device",
            async () => ((await streamsOf(rig, c.micoff)).length === 0 ? true : null),
            { timeoutMs: RELEASE_WAIT_MS, intervalMs: 50 },
          );
        }
        const idsBefore = Object.fromEntries(
          await Promise.all(CONFIGS.map(async (k) => [k, await streamsOf(rig, c[k])] as const)),
        ) as Record<Config, number[]>;
        const suspendedBefore = await suspendedSinks(rig);
        await fault.inject(rig, c, extra);
        const back = await Promise.all(
          CONFIGS.map(async (k) => {
            if (state === 'released') await c[k].m.unmute();
            return audioBack(c[k].m);
          }),
        );
        await pause(500);
        outcomes.push(
          ...(await judge(
            fault.name,
            state,
            { micoff: judged(rig, c.micoff), plain: judged(rig, c.plain) },
            back,
            idsBefore,
            RELEASE_WAIT_MS,
          )),
        );
        await leftBehind(rig, c.micoff.ff.pid, suspendedBefore, extra);
        extra.settings_kept = (await storedSettings(c.micoff)) === settingsBefore;
      } finally {
        for (const k of CONFIGS) await calls?.[k]?.ff.close().catch(() => {});
        await rig.stop();
      }
      record('firefox-faults', audioServer, fault.name, state, outcomes, extra);
      console.log(
        `Firefox fault ${fault.name} (${state}, ${audioServer}): ${JSON.stringify({ outcomes, extra })}`,
      );
      const micoff = outcomes.find((o) => o.config === 'micoff') as Outcome;
      const plain = outcomes.find((o) => o.config === 'plain') as Outcome;
      if (plain.verdict === 'silent')
        // The device gives nobody anything within the 1 s (the rig's reloaded null sink monitor comes
        // about 2 s late): micoff's audio back no later than the plain one's.
        expect(
          micoff.back_ms ?? Number.POSITIVE_INFINITY,
          `micoff's audio back no later than the plain flip's (${plain.back_ms} ms) + ${SAME_MS} ms`,
        ).toBeLessThanOrEqual((plain.back_ms ?? Number.POSITIVE_INFINITY) + SAME_MS);
      expect(
        RANK[micoff.verdict],
        `micoff (${micoff.verdict}) no worse than the plain flip (${plain.verdict})`,
      ).toBeGreaterThanOrEqual(RANK[plain.verdict]);
      if (micoff.ready_state === 'live')
        expect(micoff.released_again, 'a mute after it releases again').toBe(true);
      expect(micoff.streams_after_mute, "micoff's capture left behind after the mute").toBe(0);
      expect(extra.settings_kept, "the user's settings as they were").toBe(true);
      expect(extra.host_processes, 'as many micoff-hosts as before').toBe(extra.host_processes_before);
      expect(extra.host_at_server_dead, "no audio server client of a dead micoff-host's").toBe(0);
      expect(extra.sinks_left_suspended, 'no sink left suspended').toEqual([]);
    });
  }
}
