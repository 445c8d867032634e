// Helpers shared by the release-on-mute specs (release-*.spec.ts): Chromium's record streams at the rig
// server, timing polls, medians and raw-sample artifacts.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Worker } from '@playwright/test';
import type { TabReleaseView } from '../../extension/src/shared/messages/popup-background.ts';
import type { CpuReport } from '../../extension/src/shared/protocol.ts';
import { type AudioRig, startAudioRig } from '../rig/audio-rig.ts';
import { extensionServiceWorker, type LaunchedChromium, launchChromium } from '../rig/chromium.ts';
import { extensionId, restartAudioService, type SampledCpuReport, sampleCpu } from '../rig/host.ts';
import type { MeetingPage } from '../rig/meeting-page.ts';
import { isChromium, type RecordStream } from '../rig/pactl.ts';
import { ARTIFACTS_DIR } from '../rig/paths.ts';
import { waitFor } from '../rig/proc.ts';
import { ExtensionWorker } from '../rig/service-worker.ts';

export async function chromiumStreams(rig: AudioRig): Promise<RecordStream[]> {
  return (await rig.recordStreams()).filter(isChromium);
}

/** Polls the server as fast as pactl answers until `pred(count)`; resolves with Date.now() of the
 * first poll that saw it (resolution: one pactl round trip, ~10-20 ms). */
export async function whenStreams(
  rig: AudioRig,
  what: string,
  pred: (n: number) => boolean,
  timeoutMs = 5000,
): Promise<number> {
  return waitFor(
    what,
    async () => {
      const n = (await chromiumStreams(rig)).length;
      return pred(n) ? Date.now() : null;
    },
    { timeoutMs, intervalMs: 5 },
  );
}

/** What the page reads off its track that must not change across a release (the probe's trackSnap,
 * e2e/pages/webaudio-probe.js): identity, settings, constraints, capabilities. */
export function sameAsBefore(s: Record<string, unknown>): Record<string, unknown> {
  return {
    id: s.id,
    label: s.label,
    kind: s.kind,
    settings: s.settings,
    constraints: s.constraints,
    capabilities: s.capabilities,
  };
}

/** On-CPU time of the report's processes as % of one core, from schedstat (ns resolution) where the
 * kernel has it, else from utime+stime. The overhead ratio needs it: over a 3 s window the tick
 * figures move in steps of 0.33 % of a core, about 4 % of an 8 % call, the size of the bar itself. */
export function onCpuPct(r: CpuReport): number {
  return r.processes.reduce((sum, p) => sum + (p.run_time_pct ?? p.cpu_pct), 0);
}

/** Per process (role:name), to see where a difference comes from. */
export function byProcess(r: CpuReport): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of r.processes) {
    const key = `${p.role}:${p.comm}`;
    out[key] = Math.round(((out[key] ?? 0) + (p.run_time_pct ?? p.cpu_pct)) * 100) / 100;
  }
  return out;
}

/** Per thread name within each process role (role/thread; a trailing number, as in a pool's
 * `ThreadPoolForegr3`, dropped), % of one core to 0.001: a difference of 0.05 % of a core between
 * two browsers is a thread's, and the process figures cannot say whose (docs/design/release-on-mute.md
 * "Unmuted cost"). */
export function byThread(r: CpuReport): Record<string, number> {
  const out: Record<string, number> = {};
  for (const p of r.processes) {
    for (const t of p.threads) {
      const key = `${p.role}/${t.comm.replace(/\d+$/, '')}`;
      out[key] = Math.round(((out[key] ?? 0) + (t.run_time_pct ?? t.cpu_pct)) * 1000) / 1000;
    }
  }
  return out;
}

/** Paired CPU windows of two browsers in the same call: how many, and how long each (s). */
export const PAIRED_WINDOWS = Number(process.env.MICOFF_CPU_PAIRED ?? 20);
export const PAIRED_WINDOW_S = 3;
/** The release bar: what a call micoff released costs above the same call whose page stopped its track
 * (the floor, sampled over the same windows), as a share of the unmuted call, at most. What micoff adds
 * there: its host's history tick (every 5 s during a call) and the reports of the page's tracks. A share
 * of the unmuted call, not a ratio to the floor: the floor itself moves with the machine, and micoff's
 * few fixed tenths of a percent would be a large ratio to a small floor. The value and its figures:
 * docs/design/release-on-mute.md#released-above-floor-bar-value. */
export const RELEASED_ABOVE_FLOOR = 0.08;

/** The release's timing bars, medians over cycles (docs/design/release-on-mute.md, "Measured"):
 * the record stream gone after the release point, back after the unmute, at most (ms). */
export const RELEASE_MS = 250;
export const RESUME_MS = 250;
/** The far end's audio energy rising again after the unmute, at most (ms). */
export const AUDIO_BACK_MS = 500;
/** A CPU spec's control: muted without micoff costs at least this share of unmuted without it, so
 * the call measured is one whose mute costs what it costs today. */
export const CONTROL_MUTED_OVER_UNMUTED = 0.8;

/** Where micoff's own code runs in a browser tree: micoff-host, the extension's service worker (its
 * renderer), the browser process (native messaging, extension messaging and storage), and the page's
 * main thread (page world and content script). Threads micoff never runs on (the audio service's
 * processing, WebRTC's, the network service) are left to the whole-tree overhead bar. */
const MICOFFS_OWN: [string, (key: string) => boolean][] = [
  ['the browser process', (k) => k.startsWith('browser:')],
  ["the extension's renderer", (k) => k.startsWith('extension_renderer:')],
  ['micoff-host', (k) => k === 'other:micoff-host'],
  ["the page's main thread", (k) => k === 'renderer/chromium'],
];

export function isMicoffsOwn(key: string): boolean {
  return MICOFFS_OWN.some(([, is]) => is(key));
}

/** The unmuted overhead bars (docs/design/release-on-mute.md "Unmuted cost: the two bars"): micoff's own
 * threads (isMicoffsOwn), the sum of their median per-window differences with minus without, at most this
 * share of the call without micoff; the whole browser tree, with / without in balanced halves
 * (balancedPairedWindows), at most OVERHEAD_TREE. */
export const OVERHEAD_OWN = 0.03;
/** The whole tree's bar, in balanced halves: its figures, and why not read plainly
 * (docs/design/release-on-mute.md#unmuted-overhead-bar-values). */
export const OVERHEAD_TREE = 1.05;
/** micoff's own threads while the unmuted call's tab is hidden (background-cpu.spec.ts): OVERHEAD_OWN's
 * reads plus the background's ticks that let a hidden tab's capture watch see a stall within 1 s; what
 * they cost and why not less: docs/design/faults.md "In a background tab". */
export const HIDDEN_OVERHEAD_OWN = 0.05;
/** The whole tree then: OVERHEAD_TREE, raised by what the own-threads bar is raised (the tree holds
 * micoff's own threads too). */
export const HIDDEN_OVERHEAD_TREE = OVERHEAD_TREE + (HIDDEN_OVERHEAD_OWN - OVERHEAD_OWN);

/** micoff's own threads' share of the call: the sum over isMicoffsOwn keys (processes, and the page's
 * main thread) of the median per-window difference, over the median of the tree without micoff. A sum
 * of medians, not a median of sums: the browser process alone swings by +-0.3 % of a core in single
 * windows (the test's own CDP traffic), more than micoff's whole share. */
export function ownOverhead(paired: PairedWindow[]): number {
  const b = pairedBreakdown(paired, 0);
  const all = [...Object.entries(b.by_process), ...Object.entries(b.by_thread)];
  // A renamed process or thread would drop out of the sum and read as no overhead: each must be there.
  const missing = MICOFFS_OWN.filter(([, is]) => !all.some(([k]) => is(k))).map(([what]) => what);
  if (missing.length > 0)
    throw new Error(
      `micoff's own threads not found in the samples: ${missing.join(', ')} (keys: ${all.map(([k]) => k).join(', ')})`,
    );
  const rows = all.filter(([k]) => isMicoffsOwn(k));
  return rows.reduce((sum, [, r]) => sum + r.median_diff_pct, 0) / median(paired.map((p) => p.without_pct));
}

export interface PairedWindow {
  window: number;
  with_pct: number;
  without_pct: number;
  ratio: number;
  with_by_process: Record<string, number>;
  without_by_process: Record<string, number>;
  with_by_thread: Record<string, number>;
  without_by_thread: Record<string, number>;
}

/** Samples the browser `with` micoff and the one `without` at the same time, PAIRED_WINDOWS times,
 * the order of the two samplers alternated: what the machine's load does to one it does to the other,
 * so the ratio of each pair holds where absolute figures swing. */
export async function pairedWindows(
  rig: Pick<AudioRig, 'clientEnv'>,
  pids: { with: number; without: number },
  windowS = PAIRED_WINDOW_S,
  windows = PAIRED_WINDOWS,
): Promise<PairedWindow[]> {
  type Config = 'with' | 'without';
  const paired: PairedWindow[] = [];
  for (let i = 0; i < windows; i++) {
    const order: Config[] = i % 2 ? ['without', 'with'] : ['with', 'without'];
    const [a, b] = await Promise.all(
      order.map((c) => sampleCpu({ browserPid: pids[c], windowS, env: rig.clientEnv })),
    );
    const reports = Object.fromEntries(order.map((c, k) => [c, k === 0 ? a : b])) as Record<
      Config,
      SampledCpuReport
    >;
    const w = onCpuPct(reports.with);
    const wo = onCpuPct(reports.without);
    paired.push({
      window: i,
      with_pct: w,
      without_pct: wo,
      ratio: w / wo,
      with_by_process: byProcess(reports.with),
      without_by_process: byProcess(reports.without),
      with_by_thread: byThread(reports.with),
      without_by_thread: byThread(reports.without),
    });
  }
  return paired;
}

/** Paired windows that cancel the audio service's own offset (docs/design/release-on-mute.md "Unmuted
 * cost: the newer audio service"): of two browsers capturing at once, the one whose audio service process
 * started later costs more in that service's AudioProcessing thread (the figures are in that section),
 * with or without micoff on either side, and restarting the other's flips it. So half the
 * windows are taken with micoff's audio service the newer and half with the other's, each half after
 * restarting that side's audio service with both calls down (`restartAudioService`), and the ratio is the
 * geometric mean of the halves' medians: an offset that follows the newer service cancels. The calls of
 * the second half are left up (`calls`). */
export async function balancedPairedWindows<C>(
  sides: Record<'with' | 'without', { browser: LaunchedChromium; env: NodeJS.ProcessEnv }>,
  call: { up(): Promise<C>; down(calls: C): Promise<void> },
  windows = PAIRED_WINDOWS,
): Promise<{
  paired: PairedWindow[];
  ratio: number;
  halves: { newer: 'with' | 'without'; ratio: number }[];
  calls: C;
}> {
  const pids = {
    with: await sides.with.browser.browserPid(),
    without: await sides.without.browser.browserPid(),
  };
  const paired: PairedWindow[] = [];
  const halves: { newer: 'with' | 'without'; ratio: number }[] = [];
  let calls: C | null = null;
  for (const [h, newer] of (['with', 'without'] as const).entries()) {
    if (calls !== null) await call.down(calls);
    await restartAudioService(pids[newer], sides[newer].env);
    calls = await call.up();
    const n = h === 0 ? Math.floor(windows / 2) : windows - Math.floor(windows / 2);
    const half = await pairedWindows({ clientEnv: sides.with.env }, pids, PAIRED_WINDOW_S, n);
    halves.push({ newer, ratio: median(half.map((p) => p.ratio)) });
    paired.push(...half.map((p) => ({ ...p, window: paired.length + p.window })));
  }
  const ratio = Math.sqrt(halves.reduce((x, h) => x * h.ratio, 1));
  return { paired, ratio, halves, calls: calls as C };
}

/** Where paired windows differ: per process and per thread (the keys of byProcess and byThread), the
 * medians with and without and the median of the per-window differences, for the keys that carry at
 * least `minPct` on either side or differ by that much. */
export function pairedBreakdown(paired: PairedWindow[], minPct = 0.01) {
  const table = (
    w: (p: PairedWindow) => Record<string, number>,
    wo: (p: PairedWindow) => Record<string, number>,
  ) => {
    const keys = [...new Set(paired.flatMap((p) => [...Object.keys(w(p)), ...Object.keys(wo(p))]))].sort();
    const rows: Record<string, { with_pct: number; without_pct: number; median_diff_pct: number }> = {};
    for (const k of keys) {
      const a = paired.map((p) => w(p)[k] ?? 0);
      const b = paired.map((p) => wo(p)[k] ?? 0);
      const row = {
        with_pct: round3(median(a)),
        without_pct: round3(median(b)),
        median_diff_pct: round3(median(a.map((x, i) => x - (b[i] as number)))),
      };
      if (Math.max(row.with_pct, row.without_pct, Math.abs(row.median_diff_pct)) >= minPct) rows[k] = row;
    }
    return rows;
  };
  return {
    by_process: table(
      (p) => p.with_by_process,
      (p) => p.without_by_process,
    ),
    by_thread: table(
      (p) => p.with_by_thread,
      (p) => p.without_by_thread,
    ),
  };
}

const round3 = (x: number) => Math.round(x * 1000) / 1000;

/** The median; throws on no samples or a sample that is not a number (a missing reading), so that a
 * bar compared with it cannot pass on NaN. Infinity (e.g. "never came") is a sample. */
export function median(xs: number[]): number {
  if (xs.length === 0) throw new Error('median of no samples');
  if (xs.some(Number.isNaN)) throw new Error(`median of samples that are not numbers: ${xs.join(', ')}`);
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
}

export function saveArtifact(name: string, data: unknown): string {
  mkdirSync(ARTIFACTS_DIR, { recursive: true });
  const file = join(ARTIFACTS_DIR, name);
  writeFileSync(file, `${JSON.stringify(data, null, 2)}\n`);
  return file;
}

type Micoff = {
  settings: { update(p: unknown): Promise<unknown>; get(): Promise<unknown> };
  release: { frames(): unknown; decisions(): unknown };
};

export async function setReleaseSettings(sw: Worker, patch: Record<string, unknown>): Promise<void> {
  await sw.evaluate((p) => (globalThis as unknown as { micoff: Micoff }).micoff.settings.update(p), patch);
}

/** The common start of a release spec: release at once on mute (no delay), then the call. */
export async function openMeetingReleasingAtOnce(
  sw: Worker,
  openMeeting: () => Promise<MeetingPage>,
): Promise<MeetingPage> {
  await setReleaseSettings(sw, { releaseOnMute: true, releaseDelayMs: 0 });
  return openMeeting();
}

export function releaseFrames(sw: Worker): Promise<Record<string, Record<string, { groups: unknown[] }>>> {
  return sw.evaluate(
    () =>
      (globalThis as unknown as { micoff: Micoff }).micoff.release.frames() as Record<
        string,
        Record<string, { groups: unknown[] }>
      >,
  );
}

/** Fails if the Chromium record-stream count leaves `pred` at any poll during `ms`. */
export async function holdsFor(
  rig: AudioRig,
  what: string,
  pred: (n: number) => boolean,
  ms: number,
): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const n = (await chromiumStreams(rig)).length;
    if (!pred(n)) throw new Error(`${what}: broke after ${ms - (end - Date.now())} ms (count ${n})`);
    await new Promise((r) => setTimeout(r, 40));
  }
}

/** The tab id of a capturing page, from the extension's own reports (no "tabs" permission: the
 * extension cannot read tab URLs, but its content scripts say where they run). */
export function tabIdOf(sw: Worker, url: string): Promise<number> {
  return waitFor(`a release report from ${url}`, async () => {
    const frames = await releaseFrames(sw);
    for (const [tab, byFrame] of Object.entries(frames)) {
      if (Object.values(byFrame).some((f) => (f as unknown as { url: string }).url === url))
        return Number(tab);
    }
    return null;
  });
}

export function tabView(sw: Worker, tabId: number): Promise<TabReleaseView | null> {
  return sw.evaluate(
    (id) =>
      (globalThis as unknown as { micoff: { tabs: { get(i: number): unknown } } }).micoff.tabs.get(
        id,
      ) as TabReleaseView | null,
    tabId,
  );
}

export interface BluetoothCall {
  bt: AudioRig;
  browser: LaunchedChromium;
  sw: Worker;
  ext: ExtensionWorker;
}

/** Why a test on `withBluetoothRig` is skipped outside the PulseAudio project. */
export const BLUETOOTH_RIG_ONLY = 'own PulseAudio rig with source properties: PulseAudio project only';

/** A PulseAudio rig of its own whose `mic` says device.bus=bluetooth, and a Chromium with the extension
 * on it (a fresh profile: the Bluetooth policy at its default), the host connected, release on mute at
 * once; both are stopped after `body`, whatever it does. */
export async function withBluetoothRig(body: (call: BluetoothCall) => Promise<void>): Promise<void> {
  const bt = await startAudioRig('pulseaudio', { sourceProperties: { 'device.bus': 'bluetooth' } });
  let browser: LaunchedChromium | null = null;
  try {
    browser = await launchChromium({ env: bt.clientEnv });
    const sw = await extensionServiceWorker(browser.context, extensionId());
    const ext = new ExtensionWorker(sw);
    await ext.waitHostConnected();
    await setReleaseSettings(sw, { releaseOnMute: true, releaseDelayMs: 0 });
    await body({ bt, browser, sw, ext });
  } finally {
    await browser?.close();
    await bt.stop();
  }
}
