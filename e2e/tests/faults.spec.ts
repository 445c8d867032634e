// Faults mid-call: each part micoff sits between goes away while the microphone is released, and while
// it is unmuted; micoff's call against the plain flip's (no extension) on one private rig, both up at
// once. Per fault, state and call: what the page saw (its track's readyState and enabled, the events on
// it), how long until the far end hears the user again (from the unmute, or from the fault's end when
// unmuted), whether a mute after it releases the device again, and what is left behind (record streams,
// micoff-host processes, the settings). Bars and the table: docs/design/faults.md.
// Raw outcomes: e2e/artifacts/faults-<project>.json (one entry per cell, merged across tests).
import { chmodSync, copyFileSync, mkdtempSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Worker } from '@playwright/test';
import { STEADY_MS } from '../../extension/src/background/host-client.ts';
import {
  type AudioRig,
  type AudioRigOptions,
  type AudioServerKind,
  SIGNAL_SINK,
  startAudioRig,
} from '../rig/audio-rig.ts';
import { extensionServiceWorker, isInTree, type LaunchedChromium, launchChromium } from '../rig/chromium.ts';
import { expect, test } from '../rig/fixtures.ts';
import { extensionId } from '../rig/host.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { need } from '../rig/needs.ts';
import type { PageServer } from '../rig/page-server.ts';
import { ARTIFACTS_DIR, HOST_BINARY } from '../rig/paths.ts';
import { waitFor } from '../rig/proc.ts';
import { startXvfb, type Xvfb, xvfbMissing } from '../rig/xvfb.ts';
import {
  ageMs,
  audioBack,
  BACKGROUND_MS,
  CONFIGS,
  type Config,
  capturesStalled,
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
  STOPPED_MS,
  type State,
  serverKilledAndRestarted,
  stopServer,
  suspendedSinks,
} from './faults-util.ts';
import { chromiumStreams, setReleaseSettings } from './release-util.ts';

interface Call {
  config: Config;
  b: LaunchedChromium;
  m: MeetingPage;
  pid: number;
  sw: Worker | null;
  /** The micoff call's own copy of micoff-host, which its browser's manifest names. */
  host: string | null;
}

interface Fault {
  name: string;
  /** Its cells in npm test (faults-util.ts `InSuite`); none when unset. */
  suite?: InSuite;
  /** Where the fault exists (default: both servers). */
  servers?: readonly AudioServerKind[];
  /** The states it is tried in (default: both). */
  states?: readonly State[];
  rigOptions?: AudioRigOptions;
  /** The plain flip's call on a source of its own (`mic2`, over a second null sink playing the same
   * signal), so micoff's call is the only recorder of `mic`: on PulseAudio its null sink then runs far
   * ahead while micoff's device is released, as a virtual microphone nothing else records does. */
  ownSources?: boolean;
  /** Both calls headful on a private Xvfb, each behind another tab of its browser for BACKGROUND_MS
   * before the fault and until it is judged, and playing nothing (a far end that is silent): Chromium
   * runs the timers of a page hidden that long, and not audible, at most once a second. With nothing
   * played the far end decodes nothing (loopback.js): its audio is back when packets arrive again (a
   * stalled capture sends none). */
  background?: boolean;
  /** The fault, over when it resolves; what it saw on the way goes in `extra`. */
  inject(rig: AudioRig, calls: Record<Config, Call>, extra: Record<string, unknown>): Promise<void>;
  /** Released only: a part of the fault that comes with the unmute, started right before both calls
   * unmute and awaited after their audio is back. */
  atUnmute?(rig: AudioRig, calls: Record<Config, Call>, extra: Record<string, unknown>): Promise<void>;
}

/** The micoff-host processes under the micoff browser (at least one). */
async function hostPids(calls: Record<Config, Call>): Promise<number[]> {
  const pids = await pidsOf('micoff-host', calls.micoff.pid);
  if (pids.length === 0) throw new Error('no micoff-host under the micoff browser');
  return pids;
}

const FAULTS: Fault[] = [
  {
    name: 'audio server killed and restarted',
    inject: (rig) => serverKilledAndRestarted(rig),
  },
  {
    name: 'micoff-host killed',
    inject: async (_rig, calls, extra) => {
      extra.host_new_after_ms = await killHost(calls.micoff.pid, await hostPids(calls));
    },
  },
  {
    // The host dies as the user unmutes: the capture micoff reopens then appears at the server with no
    // host to see it, and on PulseAudio an idle null sink's monitor (the rig's mic) gives its first
    // audio up to 2 s late unless the host's sink waker wakes the sink (docs/design/release-on-mute.md,
    // "What the host does: the sink waker"). The host has run a while first, as in a call.
    name: 'micoff-host killed at the unmute',
    // The extension's prompt restart and the new host's sink waker (PulseAudio's idle null sink).
    suite: { states: ['released'], servers: ['pulseaudio'] },
    states: ['released'],
    ownSources: true,
    inject: async (_rig, calls, extra) => {
      const pids = await hostPids(calls);
      await pause(Math.max(0, STEADY_MS + 1000 - Math.min(...pids.map(ageMs))));
      extra.host_pids_killed = pids;
    },
    atUnmute: async (_rig, calls, extra) => {
      extra.host_new_after_ms = await killHost(calls.micoff.pid, extra.host_pids_killed as number[]);
    },
  },
  {
    name: 'pipewire-pulse restarted',
    servers: ['pipewire'],
    rigOptions: { devicesInPipeWire: true },
    inject: (rig) => pipewirePulseRestarted(rig),
  },
  {
    // The host dies and cannot start again for a while (its binary fails): the popup says so; once it
    // can, the popup's retry brings it back and the notice goes.
    name: 'micoff-host down until restored',
    inject: async (_rig, calls, extra) => {
      const host = calls.micoff.host;
      if (!host) throw new Error('the micoff call has no host copy of its own');
      const before = await pidsOf('micoff-host', calls.micoff.pid);
      renameSync(host, `${host}.saved`);
      writeFileSync(host, '#!/bin/sh\necho "micoff-host: cannot start (faults spec)" >&2\nexit 1\n');
      chmodSync(host, 0o755);
      for (const p of before) process.kill(p, 'SIGKILL');
      const popup = await calls.micoff.b.context.newPage();
      try {
        await popup.goto(`chrome-extension://${extensionId()}/popup.html`);
        const notice = popup.locator('#host .notice');
        await notice.waitFor({ timeout: 10_000 });
        extra.popup_host_down = (await notice.textContent())?.trim() ?? '';
        await popup.screenshot({ path: `${ARTIFACTS_DIR}/faults-host-down-popup.png` });
        renameSync(`${host}.saved`, host);
        const t0 = Date.now();
        await popup.getByRole('button', { name: 'Retry now' }).click();
        await notice.waitFor({ state: 'detached', timeout: 10_000 });
        extra.popup_host_back_ms = Date.now() - t0;
      } finally {
        await popup.close();
      }
    },
  },
  {
    name: "the extension's service worker stopped",
    inject: async (_rig, calls) => {
      const browser = calls.micoff.b.context.browser();
      const cdp = browser
        ? await browser.newBrowserCDPSession()
        : await calls.micoff.b.context.newCDPSession(calls.micoff.m.page);
      const { targetInfos } = (await cdp.send('Target.getTargets')) as {
        targetInfos: { targetId: string; type: string; url: string }[];
      };
      const sw = targetInfos.find(
        (t) => t.type === 'service_worker' && t.url.startsWith(`chrome-extension://${extensionId()}/`),
      );
      if (!sw) throw new Error("no service worker target of micoff's");
      await cdp.send('Target.closeTarget', { targetId: sw.targetId });
      await cdp.detach();
      calls.micoff.sw = null;
    },
  },
  {
    name: 'capture device gone and back',
    inject: (rig) => deviceGoneAndBack(rig),
  },
  {
    name: `audio server stopped ${STOPPED_MS / 1000} s`,
    inject: (rig) => stopServer(rig, STOPPED_MS),
  },
  {
    name: `audio server stopped ${HICCUP_MS / 1000} s`,
    inject: (rig) => stopServer(rig, HICCUP_MS),
  },
  {
    // Every capture stream of both calls (capturesStalled).
    name: 'capture stalled at the server',
    // The capture watch.
    suite: { states: ['unmuted'], servers: ['pulseaudio', 'pipewire'] },
    inject: async (rig) =>
      capturesStalled(
        rig,
        (await chromiumStreams(rig)).map((s) => s.index),
      ),
  },
  {
    // The capture watch reads on timers; a user in a call often looks at another tab.
    name: 'capture stalled at the server, the call in a background tab',
    // The background's ticks.
    suite: { states: ['unmuted'], servers: ['pulseaudio'] },
    states: ['unmuted'],
    background: true,
    inject: async (rig) =>
      capturesStalled(
        rig,
        (await chromiumStreams(rig)).map((s) => s.index),
      ),
  },
  {
    name: 'tab frozen',
    inject: async (_rig, calls) => {
      const sessions = await Promise.all(
        CONFIGS.map((c) => calls[c].b.context.newCDPSession(calls[c].m.page)),
      );
      for (const s of sessions) await s.send('Page.setWebLifecycleState', { state: 'frozen' });
      await pause(3000);
      for (const s of sessions) await s.send('Page.setWebLifecycleState', { state: 'active' });
      for (const s of sessions) await s.detach();
    },
  },
];

/** Both calls; micoff's browser starts its own copy of micoff-host (in `hostDir`), which a fault may
 * take away. */
async function openCalls(
  rig: AudioRig,
  pages: PageServer,
  hostDir: string,
  plainSource: string | null,
  url: string,
  display?: string,
): Promise<Record<Config, Call>> {
  const calls: Partial<Record<Config, Call>> = {};
  try {
    for (const config of CONFIGS) {
      const host = config === 'micoff' ? join(hostDir, 'micoff-host') : null;
      if (host) copyFileSync(HOST_BINARY, host);
      const b = await launchChromium({
        env:
          config === 'plain' && plainSource ? { ...rig.clientEnv, PULSE_SOURCE: plainSource } : rig.clientEnv,
        withExtension: config === 'micoff',
        ...(host ? { hostBinary: host } : {}),
        ...(display ? { display, realFocus: true, extraArgs: ['--window-size=640,800'] } : {}),
      });
      calls[config] = {
        config,
        b,
        m: undefined as unknown as MeetingPage,
        pid: await b.browserPid(),
        sw: null,
        host,
      };
      if (config === 'micoff') {
        const sw = await extensionServiceWorker(b.context, extensionId());
        await setReleaseSettings(sw, { releaseOnMute: true, releaseDelayMs: 0 });
        (calls[config] as Call).sw = sw;
      }
      const m = await MeetingPage.open(b.context, pages.url(url));
      (calls[config] as Call).m = m;
      await m.ready();
      await m.waitForAudioFlowing();
      await m.page.evaluate(RECORD_TRACK_EVENTS);
    }
    return calls as Record<Config, Call>;
  } catch (e) {
    for (const c of Object.values(calls)) await c?.b.close().catch(() => {});
    throw e;
  }
}

/** The call's capture streams at the audio server (the browser's, by process tree): their indices. */
async function streamIdsOf(rig: AudioRig, c: Call): Promise<number[]> {
  return (await chromiumStreams(rig))
    .filter((s) => s.processId !== null && isInTree(s.processId, c.pid))
    .map((s) => s.index);
}

/** The call as `judge` reads it. */
function judged(rig: AudioRig, c: Call): Judged {
  return {
    m: c.m,
    events: () => c.m.page.evaluate('window.__events'),
    streams: () => streamIdsOf(rig, c),
  };
}

async function streamsOf(rig: AudioRig, c: Call): Promise<number> {
  return (await streamIdsOf(rig, c)).length;
}

/** The user's settings as micoff reads them, to check nothing is lost. */
async function storedSettings(c: Call): Promise<string> {
  const sw = c.sw ?? (await extensionServiceWorker(c.b.context, extensionId()));
  c.sw = sw;
  return sw.evaluate(async () =>
    JSON.stringify(
      await (
        globalThis as unknown as { micoff: { settings: { get(): Promise<unknown> } } }
      ).micoff.settings.get(),
    ),
  );
}

// npm test runs the cells a fault's `suite` names; twenty cells on PulseAudio and twenty-one on PipeWire,
// each with its own audio server and two browsers, two of them with a 30 s stop, are 8 min more than the
// suite's lanes have room for: `npm run test:faults` (MICOFF_FAULTS=1) runs them all (docs/design/faults.md).
for (const fault of FAULTS) {
  for (const state of fault.states ?? (['released', 'unmuted'] as const)) {
    if (!cellInRun(fault.suite, state)) continue;
    test(`fault: ${fault.name}, while ${state}`, async ({ audioServer, pages }) => {
      test.skip(
        fault.servers !== undefined && !fault.servers.includes(audioServer),
        `${fault.name}: ${fault.servers?.join(', ')} only`,
      );
      const skipped = cellSkipped(fault.suite, audioServer);
      test.skip(skipped !== null, `${fault.name}: ${skipped}`);
      test.setTimeout(STOPPED_MS + 120_000);
      const rig = await startAudioRig(audioServer, { reader: false, tone: false, ...fault.rigOptions });
      let calls: Record<Config, Call> | undefined;
      const outcomes: Outcome[] = [];
      const extra: Record<string, unknown> = {};
      const hostDir = mkdtempSync(join(tmpdir(), 'micoff-faults-'));
      let x: Xvfb | undefined;
      try {
        if (fault.background) {
          need(xvfbMissing());
          x = await startXvfb();
        }
        await rig.playInto(SIGNAL_SINK, 'speech');
        let plainSource: string | null = null;
        if (fault.ownSources) {
          plainSource = 'mic2';
          await rig.pactl(['load-module', 'module-null-sink', 'sink_name=spk2']);
          await rig.pactl([
            'load-module',
            'module-remap-source',
            `source_name=${plainSource}`,
            'master=spk2.monitor',
          ]);
          await rig.playInto('spk2', 'speech');
        }
        // A far end that plays what it receives; a background call's plays nothing (`background`).
        const url = fault.background ? 'meeting.html' : 'meeting.html?playout=1';
        calls = await openCalls(rig, pages, hostDir, plainSource, url, x?.display);
        const c = calls;
        if (fault.background) {
          for (const k of CONFIGS) {
            const tab = await c[k].b.context.newPage();
            await tab.goto(pages.url('index.html'));
            await tab.bringToFront();
            await waitFor(`${k}'s call hidden`, async () =>
              (await c[k].m.page.evaluate('document.visibilityState')) === 'hidden' ? true : null,
            );
          }
          await pause(BACKGROUND_MS);
        }
        const settingsBefore = await storedSettings(c.micoff);
        extra.host_at_server_before = await hostAtServer(rig);
        if (state === 'released') {
          for (const k of CONFIGS) await c[k].m.mute();
          await waitFor(
            'micoff released',
            async () => ((await streamsOf(rig, c.micoff)) === 0 ? true : null),
            {
              timeoutMs: 3000,
              intervalMs: 20,
            },
          );
        }
        const idsBefore = Object.fromEntries(
          await Promise.all(CONFIGS.map(async (k) => [k, await streamIdsOf(rig, c[k])] as const)),
        ) as Record<Config, number[]>;
        const suspendedBefore = await suspendedSinks(rig);
        await fault.inject(rig, c, extra);
        const withUnmute = state === 'released' ? fault.atUnmute?.(rig, c, extra) : undefined;
        // Both calls timed at once, each from its own unmute (or from the fault's end).
        const back = await Promise.all(
          CONFIGS.map(async (k) => {
            if (state === 'released') await c[k].m.unmute();
            return audioBack(c[k].m, { packetsOnly: fault.background === true });
          }),
        );
        await withUnmute;
        await pause(500);
        outcomes.push(
          ...(await judge(
            fault.name,
            state,
            {
              micoff: judged(rig, c.micoff),
              plain: judged(rig, c.plain),
            },
            back,
            idsBefore,
            3000,
          )),
        );
        await leftBehind(rig, c.micoff.pid, suspendedBefore, extra);
        extra.settings_kept = (await storedSettings(c.micoff)) === settingsBefore;
        if (fault.name.startsWith('micoff-host killed')) {
          const popup = await c.micoff.b.context.newPage();
          await popup.goto(`chrome-extension://${extensionId()}/popup.html`);
          await popup.waitForTimeout(500);
          extra.popup_host_notices = await popup.locator('#host .notice').count();
          extra.popup_host = (await popup.locator('#host').textContent())?.trim() ?? '';
          await popup.screenshot({
            path: `${ARTIFACTS_DIR}/faults-${audioServer}-host-killed-${state}-popup.png`,
          });
          await popup.close();
        }
      } finally {
        for (const k of CONFIGS) await calls?.[k]?.b.close().catch(() => {});
        await rig.stop();
        await x?.stop();
        rmSync(hostDir, { recursive: true, force: true });
      }
      record('faults', audioServer, fault.name, state, outcomes, extra);
      console.log(`fault ${fault.name} (${state}, ${audioServer}): ${JSON.stringify({ outcomes, extra })}`);
      const micoff = outcomes.find((o) => o.config === 'micoff') as Outcome;
      const plain = outcomes.find((o) => o.config === 'plain') as Outcome;
      // Whatever the plain flip gets (its track stays live and silent for good in the stall), micoff's
      // never does: its capture watch reopens a capture that stopped delivering
      // (page/chromium/guards/capture-watch.ts).
      expect(micoff.verdict, 'micoff leaves no enabled live track that carries nothing').not.toBe('silent');
      expect(
        RANK[micoff.verdict],
        `micoff (${micoff.verdict}) no worse than the plain flip (${plain.verdict})`,
      ).toBeGreaterThanOrEqual(RANK[plain.verdict]);
      if (micoff.ready_state === 'live')
        expect(micoff.released_again, 'a mute after it releases again').toBe(true);
      expect(micoff.streams_after_mute, "micoff's capture left behind after the mute").toBe(0);
      expect(extra.settings_kept, "the user's settings as they were").toBe(true);
      expect(extra.sinks_left_suspended, 'no sink left suspended').toEqual([]);
      expect(extra.host_processes, 'one micoff-host').toBe(1);
      expect(extra.host_at_server_dead, "no audio server client of a dead micoff-host's").toBe(0);
      const before = extra.host_at_server_before as { clients: number[]; sink_inputs: number[] };
      const after = extra.host_at_server_after as { clients: number[]; sink_inputs: number[] };
      expect(after.clients.length, "micoff-host's connections to the audio server, as before").toBe(
        before.clients.length,
      );
      expect(after.sink_inputs.length, "micoff-host's playback streams, none doubled").toBeLessThanOrEqual(
        before.sink_inputs.length,
      );
      if ('popup_host' in extra) {
        expect(extra.popup_host_notices, 'the popup: connected again, no notice').toBe(0);
        expect(extra.popup_host, 'the popup says the host was restarted, and why').toMatch(
          /^micoff-host restarted at .+ \(the last one ended: .+\)$/,
        );
      }
      if (fault.name === 'micoff-host down until restored') {
        expect(extra.popup_host_down, 'the popup says the host is gone, and why').toContain(
          'Cannot talk to micoff-host',
        );
        expect(extra.popup_host_back_ms, "the popup's retry brings the host back").toBeLessThan(10_000);
      }
    });
  }
}
