// What both faults specs use (faults.spec.ts, Chromium; firefox-faults.spec.ts, Firefox): the states,
// the timings, how a call's audio is found back and judged, what micoff-host leaves at the server, and
// the artifact each cell adds to. Bars and tables: docs/design/faults.md.
import { existsSync, readFileSync } from 'node:fs';
import { type AudioRig, type AudioServerKind, PipeWireRig, SIGNAL_SINK } from '../rig/audio-rig.ts';
import { isInTree } from '../rig/chromium.ts';
import type { MeetingStats } from '../rig/meeting-page.ts';
import { recordStreams } from '../rig/pactl.ts';
import { ARTIFACTS_DIR } from '../rig/paths.ts';
import { run, waitFor } from '../rig/proc.ts';
import { saveArtifact } from './release-util.ts';

export type Config = 'micoff' | 'plain';
export const CONFIGS: readonly Config[] = ['micoff', 'plain'];
export type State = 'released' | 'unmuted';

/** The cells of a fault that npm test runs: the ones where micoff itself acts (its capture watch, the
 * background's ticks, the host's restart and sink waker), on the servers named. `npm run test:faults`
 * (MICOFF_FAULTS=1) runs every cell (docs/design/faults.md "How it is measured"). */
export interface InSuite {
  states: readonly State[];
  servers: readonly AudioServerKind[];
}

const EVERY_CELL = process.env.MICOFF_FAULTS === '1';

/** Whether a fault's cell in `state` is a test of this run at all. */
export function cellInRun(suite: InSuite | undefined, state: State): boolean {
  return EVERY_CELL || suite?.states.includes(state) === true;
}

/** Why a cell of this run is skipped on `server` (null: it runs). */
export function cellSkipped(suite: InSuite | undefined, server: AudioServerKind): string | null {
  if (EVERY_CELL || suite?.servers.includes(server)) return null;
  return `in npm test on ${suite?.servers.join(', ')} only; MICOFF_FAULTS=1 runs every cell`;
}
/** An enabled live track may carry nothing for at most this long once the fault is over (ms). */
export const SILENT_BAR_MS = 1000;

/** Where the device gives the plain flip nothing either within SILENT_BAR_MS, micoff's audio may come
 * back this much later at most (two polls of the far end's statistics). */
export const SAME_MS = 50;
/** How long the audio server is stopped (SIGSTOP .. SIGCONT), as a suspend would. */
export const STOPPED_MS = Number(process.env.MICOFF_FAULT_STOP_MS ?? 30_000);

/** A short stop (a hiccup): a capture watch that reopens a stalled capture must not make it worse. */
export const HICCUP_MS = 3000;
/** How long to wait for the far end to hear the user again before calling the track silent. */
export const BACK_WAIT_MS = 5000;

export async function pidsOf(name: string, under: number): Promise<number[]> {
  const r = await run('pgrep', ['-x', name]);
  return r.stdout
    .split('\n')
    .map(Number)
    .filter((p) => p > 0 && isInTree(p, under));
}

export const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** How long the process has run (ms), from /proc (its start time in clock ticks since boot). */
export function ageMs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  const startTicks = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[19]);
  const uptimeS = Number(readFileSync('/proc/uptime', 'utf8').split(' ')[0]);
  return (uptimeS - startTicks / CLOCK_TICKS) * 1000;
}
/** USER_HZ: 100 on every Linux architecture the suite runs on. */
const CLOCK_TICKS = 100;

/** SIGKILL to `before` (the hosts under the browser `browserPid`) at once, then waits for the extension's new one:
 * ms from the kill until it runs. */
export async function killHost(browserPid: number, before: number[]): Promise<number> {
  const t0 = Date.now();
  for (const p of before) process.kill(p, 'SIGKILL');
  await waitFor(
    'a new micoff-host (the extension reconnects)',
    async () => ((await pidsOf('micoff-host', browserPid)).some((p) => !before.includes(p)) ? true : null),
    { timeoutMs: 15_000, intervalMs: 20 },
  );
  return Date.now() - t0;
}

/** The audio server's processes killed (SIGKILL, as a crash ends them) and started again; the
 * source's signal with them (a restarted server has its devices again, not the rig's player). */
export async function serverKilledAndRestarted(rig: AudioRig): Promise<void> {
  await rig.restart({ killed: true });
  await rig.playInto(SIGNAL_SINK, 'speech');
}

/** pipewire-pulse alone restarted, as `systemctl --user restart pipewire-pulse` does: PipeWire,
 * WirePlumber and the devices (PipeWire's own: the rig needs `devicesInPipeWire`) stay; the source's
 * signal, a client of pipewire-pulse, is played again. */
export async function pipewirePulseRestarted(rig: AudioRig): Promise<void> {
  if (!(rig instanceof PipeWireRig)) throw new Error("pipewire-pulse is PipeWire's");
  await rig.restartPulse();
  await rig.playInto(SIGNAL_SINK, 'speech');
}

/** How long a call's tab is hidden before what a background case measures: past the 10 s after
 * which Chromium runs a hidden page's timers at most once a second. */
export const BACKGROUND_MS = 12_000;

/** A capture that stays live and delivers nothing while the server runs, as a long stop left one once
 * (docs/design/faults.md); the device itself stays, so a reopen gets audio at once. PulseAudio: the
 * capture streams `indices` moved to a suspended source (a null sink's monitor). PipeWire, whose
 * pipewire-pulse keeps feeding a suspended sink's monitor: each stream's own node paused
 * (`pw-cli send-command <node> Pause`), which leaves it connected, uncorked and `running` to
 * pipewire-pulse and its client. */
export async function capturesStalled(rig: AudioRig, indices: number[]): Promise<void> {
  if (rig instanceof PipeWireRig) {
    const streams = await recordStreams(rig.pactl);
    for (const i of indices) {
      const node = streams.find((s) => s.index === i)?.properties['object.id'];
      if (node === undefined)
        throw new Error(`capture stream ${i}: no PipeWire node (object.id) at the server`);
      await rig.pwCli(['send-command', node, 'Pause', '{}']);
    }
    return;
  }
  await rig.pactl(['load-module', 'module-null-sink', 'sink_name=stalled']);
  await rig.pactl(['suspend-sink', 'stalled', '1']);
  for (const i of indices) await rig.pactl(['move-source-output', String(i), 'stalled.monitor']);
}

/** The microphone's module unloaded, 2 s, loaded again and made the default source. */
export async function deviceGoneAndBack(rig: AudioRig): Promise<void> {
  await rig.pactl(['unload-module', 'module-remap-source']);
  await pause(2000);
  await rig.pactl(['load-module', 'module-remap-source', 'source_name=mic', `master=${SIGNAL_SINK}.monitor`]);
  await rig.pactl(['set-default-source', 'mic']);
}

/** The audio server's processes stopped for `ms`, then continued. */
export async function stopServer(rig: AudioRig, ms: number): Promise<void> {
  for (const p of rig.serverPids()) process.kill(p, 'SIGSTOP');
  await pause(ms);
  for (const p of rig.serverPids()) process.kill(p, 'SIGCONT');
}

/** ms from now until the far end hears the user again, or null within BACK_WAIT_MS: its received
 * energy grows with packets arriving in the same poll. Energy alone is not enough: the far end's jitter
 * buffer conceals missing packets with audio of its own (fading from the last it heard), so right after
 * a capture stops the energy still grows while nothing comes. `packetsOnly`: packets arriving, for a far
 * end that plays nothing (and so measures no energy). */
export async function audioBack(
  m: { stats(): Promise<MeetingStats> },
  opts: { packetsOnly?: boolean } = {},
): Promise<number | null> {
  const t0 = Date.now();
  const read = async () => {
    const i = (await m.stats()).inbound;
    return { energy: i?.totalAudioEnergy ?? 0, packets: i?.packetsReceived ?? 0 };
  };
  let prev = await read();
  while (Date.now() - t0 < BACK_WAIT_MS) {
    await pause(20);
    const now = await read();
    if ((opts.packetsOnly || now.energy - prev.energy > 1e-6) && now.packets > prev.packets)
      return Date.now() - t0;
    prev = now;
  }
  return null;
}

/** micoff-host's connections to the audio server and its playback streams (the sink waker), with the
 * pids behind them: none may outlive the process, none may be doubled by a reconnect. */
export async function hostAtServer(rig: AudioRig): Promise<{ clients: number[]; sink_inputs: number[] }> {
  type Item = { properties?: Record<string, string> };
  const ofHost = async (what: string) =>
    ((JSON.parse(await rig.pactl(['-f', 'json', 'list', what])) as Item[]) ?? [])
      .filter((x) => x.properties?.['application.process.binary'] === 'micoff-host')
      .map((x) => Number(x.properties?.['application.process.id']));
  return { clients: await ofHost('clients'), sink_inputs: await ofHost('sink-inputs') };
}

/** The server's sinks by name, and those of them suspended. */
export async function suspendedSinks(rig: AudioRig): Promise<{ known: string[]; suspended: string[] }> {
  const sinks = JSON.parse(await rig.pactl(['-f', 'json', 'list', 'short', 'sinks'])) as {
    name: string;
    state: string;
  }[];
  return {
    known: sinks.map((s) => s.name),
    suspended: sinks.filter((s) => s.state === 'SUSPENDED').map((s) => s.name),
  };
}

export interface Outcome {
  fault: string;
  state: State;
  config: Config;
  /** The page's track once the fault is over (and unmuted). */
  ready_state: string;
  enabled: boolean;
  events: string[];
  /** Far end hears the user again, ms from the unmute (released) or the fault's end (unmuted). */
  back_ms: number | null;
  /** A mute after it: micoff's device released again (null: not micoff's, or the track ended). */
  released_again: boolean | null;
  /** Capture streams of the call's browser once the fault is over, before that mute: whether a silent
   * track still has a capture at the server (stalled) or none (ended beneath the page). */
  streams_before_mute: number;
  /** Capture streams of the call's browser after that mute. */
  streams_after_mute: number;
  /** Unmuted: the call's capture streams once the fault is over are all new ones (the capture was
   * reopened: micoff's capture watch, or the browser's own); null when released. */
  capture_reopened: boolean | null;
  /** What the page has left: 'back' (audio within the bar), 'ended' (the page is told), 'silent' (an
   * enabled live track that carries nothing: the one outcome never allowed). */
  verdict: 'back' | 'ended' | 'silent';
}

/** Evaluated in a meeting page: the events its track gets from now on go to `window.__events`. */
export const RECORD_TRACK_EVENTS = `window.__events = [];
  for (const type of ['ended', 'mute', 'unmute'])
    call.track.addEventListener(type, () => window.__events.push(type));`;

export const RANK = { back: 2, ended: 1, silent: 0 } as const;

/** The verdict on a page's track once the fault is over: `ended` when not live, else `back` when its
 * audio reached the far end within SILENT_BAR_MS, else `silent`. */
export function verdictOf(readyState: string, backMs: number | null): Outcome['verdict'] {
  if (readyState !== 'live') return 'ended';
  return backMs !== null && backMs <= SILENT_BAR_MS ? 'back' : 'silent';
}

/** Adds one cell's outcomes to the project's artifact (tests of a project run one after another). */
export function record(
  file: string,
  server: string,
  fault: string,
  state: State,
  outcomes: Outcome[],
  extra: Record<string, unknown>,
): void {
  const name = `${file}-${server}.json`;
  const path = `${ARTIFACTS_DIR}/${name}`;
  const all: Record<string, unknown> = existsSync(path) ? JSON.parse(readFileSync(path, 'utf8')) : {};
  all[`${fault} | ${state}`] = { outcomes, ...extra };
  saveArtifact(name, all);
}

/** What `judge` needs of a call: its page (the track, the events on it, the mute) and its capture
 * streams at the audio server. */
export interface Judged {
  m: { stats(): Promise<MeetingStats>; mute(): Promise<unknown> };
  events(): Promise<string[]>;
  streams(): Promise<number[]>;
}

/** Once the fault is over: each call's outcome (its track, its audio back in `back`, its capture streams
 * against `idsBefore`); then both muted again, whether micoff's device is released again where its
 * track is live (within `releaseWaitMs`), and the capture streams each call has left. */
export async function judge(
  fault: string,
  state: State,
  calls: Record<Config, Judged>,
  back: (number | null)[],
  idsBefore: Record<Config, number[]>,
  releaseWaitMs: number,
): Promise<Outcome[]> {
  const outcomes: Outcome[] = [];
  for (const [i, k] of CONFIGS.entries()) {
    const s = await calls[k].m.stats();
    const readyState = s.track?.readyState ?? 'none';
    const backMs = back[i] ?? null;
    const idsNow = await calls[k].streams();
    outcomes.push({
      fault,
      state,
      config: k,
      ready_state: readyState,
      enabled: s.track?.enabled ?? false,
      events: await calls[k].events(),
      back_ms: backMs,
      released_again: null,
      streams_before_mute: idsNow.length,
      streams_after_mute: -1,
      capture_reopened:
        state === 'unmuted' && idsNow.length > 0 ? !idsNow.some((id) => idsBefore[k].includes(id)) : null,
      verdict: verdictOf(readyState, backMs),
    });
  }
  // Releases go on: a mute after the fault releases micoff's device again.
  for (const k of CONFIGS) await calls[k].m.mute();
  for (const o of outcomes) {
    const call = calls[o.config];
    if (o.config === 'micoff' && o.ready_state === 'live') {
      o.released_again = await waitFor(
        'micoff released again',
        async () => ((await call.streams()).length === 0 ? true : null),
        { timeoutMs: releaseWaitMs, intervalMs: 20 },
      ).catch(() => false);
    }
    o.streams_after_mute = (await call.streams()).length;
  }
  return outcomes;
}

/** What micoff-host and its sink waker leave, into `extra`: the hosts under `browserPid`, their
 * connections to the audio server (none of a dead one's), and on PulseAudio the sinks suspended since
 * `suspendedBefore` (WirePlumber suspends idle nodes itself; a sink the fault made, the stall's, aside). */
export async function leftBehind(
  rig: AudioRig,
  browserPid: number,
  suspendedBefore: { known: string[]; suspended: string[] },
  extra: Record<string, unknown>,
): Promise<void> {
  const hostPids = await pidsOf('micoff-host', browserPid);
  extra.host_processes = hostPids.length;
  // The host reconnects to a restarted server on its own: give it the time its backoff takes.
  await pause(1000);
  const after = await hostAtServer(rig);
  extra.host_at_server_after = after;
  extra.host_at_server_dead = [...after.clients, ...after.sink_inputs].filter(
    (p) => !hostPids.includes(p),
  ).length;
  const now = await suspendedSinks(rig);
  extra.sinks_left_suspended =
    rig.kind === 'pulseaudio'
      ? now.suspended.filter(
          (n) => suspendedBefore.known.includes(n) && !suspendedBefore.suspended.includes(n),
        )
      : [];
}
