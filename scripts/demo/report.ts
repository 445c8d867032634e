// The demo's figures: CpuReports of several phases (one `micoff-host sample` each) folded into rows per
// process and per audio thread, with one column group per phase. Pure functions, unit-tested.
//
// A phase is any measured state (`unmuted`, `muted`, `muted_micoff`, ...), and a run carries its
// scenario (browser, server, capture latency): Chromium and Firefox are runs in the same JSON, and the
// phases that mean the same in both (their `state`) line up in a side-by-side comparison.
import type { CpuReport, ProcessRates, ThreadRates } from '../../e2e/rig/host.ts';
import { AUDIO_SERVER_ROLES } from '../../extension/src/shared/protocol.ts';

/** What a phase is, across browsers: the call unmuted, muted with the browser left alone, muted with
 * the microphone released (micoff in Chromium, Firefox's own pref). */
export type PhaseState = 'unmuted' | 'muted' | 'released';
export const PHASE_STATES: readonly PhaseState[] = ['unmuted', 'muted', 'released'];

export interface PhaseSpec {
  id: string;
  label: string;
  /** Column header in the text table (default: label). */
  short?: string;
  /** Set on the phases that line up across runs (`compareRuns`). */
  state?: PhaseState;
}

export interface PhaseResult extends PhaseSpec {
  window_s: number;
  report: CpuReport;
}

export interface Figures {
  cpu_pct: number;
  wakeups_per_s: number;
}

export interface Row {
  kind: 'process' | 'thread' | 'total';
  /** `renderer`, `audio_server`, ... (the host's role names). */
  role: string;
  pid: number | null;
  tid: number | null;
  name: string;
  /** Figures per phase id; null where the process/thread did not exist in that phase. */
  values: Record<string, Figures | null>;
}

export interface Scenario {
  browser: string;
  browser_version: string | null;
  server: { kind: string; name: string; version: string };
  capture_latency: string;
  /** What else runs against the server in every phase (rig clients), for the reader of the figures. */
  notes: string[];
}

export interface Run {
  scenario: Scenario;
  phases: PhaseResult[];
  rows: Row[];
  /** Why this configuration stopped (its phases so far are kept); absent when it ran through. */
  error?: string;
}

/** Threads that carry audio work (docs/test-rig.md, "Which threads do the audio work"). */
export const AUDIO_THREAD =
  /^(AudioInputDevic|AudioOutputDevi|AudioProcessing|threaded-ml|ThreadPoolAudio|WebRTC_W_and_N|Chrome_ChildIOT|null-source|null-sink|alsa-|data-loop|pipewire-pulse|pipewire|pulseaudio|GraphRunner|AudioIP|WebrtcC)/;

export interface RowOptions {
  /** Threads shown per process (besides the process row). */
  threadsPerProcess?: number;
  /** A thread is shown when it is an audio thread or reaches this CPU % in some phase. */
  minThreadCpu?: number;
  /** Keep processes that are idle in every phase (cpu 0, < 1 wakeup/s); default false. */
  keepIdle?: boolean;
}

const ROLE_ORDER = [
  'renderer',
  'content', // Firefox's web content process (the page's capture and WebRTC)
  'audio_service',
  'rdd',
  'network_service',
  'socket',
  'gpu',
  'browser',
  'utility',
  'audio_server',
  'pipewire_pulse',
  'pipewire',
  'wireplumber',
];
const roleRank = (r: string) => {
  const i = ROLE_ORDER.indexOf(r);
  return i < 0 ? ROLE_ORDER.length - 1 : i;
};

const fig = (x: { cpu_pct: number; wakeups_per_s: number | null }): Figures => ({
  cpu_pct: x.cpu_pct,
  wakeups_per_s: x.wakeups_per_s ?? 0,
});

/** Rows: per process (ordered by role), its top audio threads under it, then totals. */
export function buildRows(phases: PhaseResult[], o: RowOptions = {}): Row[] {
  const perProcess = o.threadsPerProcess ?? 4;
  const minCpu = o.minThreadCpu ?? 0.5;
  const procs = new Map<number, { p: ProcessRates; by: Map<string, ProcessRates> }>();
  for (const ph of phases) {
    for (const p of ph.report.processes) {
      const e = procs.get(p.pid) ?? { p, by: new Map() };
      e.by.set(ph.id, p);
      procs.set(p.pid, e);
    }
  }
  const peak = (e: { by: Map<string, ProcessRates> }) =>
    Math.max(0, ...[...e.by.values()].map((p) => p.cpu_pct));
  const ordered = [...procs.values()].sort(
    (a, b) => roleRank(a.p.role) - roleRank(b.p.role) || peak(b) - peak(a),
  );

  const rows: Row[] = [];
  const idle = (e: { by: Map<string, ProcessRates> }) =>
    [...e.by.values()].every((p) => p.cpu_pct < 0.05 && (p.wakeups_per_s ?? 0) < 1);
  for (const e of ordered) {
    if (!o.keepIdle && idle(e)) continue;
    const values: Record<string, Figures | null> = {};
    for (const ph of phases) {
      const p = e.by.get(ph.id);
      values[ph.id] = p ? fig(p) : null;
    }
    rows.push({ kind: 'process', role: e.p.role, pid: e.p.pid, tid: null, name: e.p.comm, values });

    const threads = new Map<number, { t: ThreadRates; by: Map<string, ThreadRates> }>();
    for (const [phase, p] of e.by) {
      for (const t of p.threads) {
        const te = threads.get(t.tid) ?? { t, by: new Map() };
        te.by.set(phase, t);
        threads.set(t.tid, te);
      }
    }
    const tpeak = (te: { by: Map<string, ThreadRates> }) =>
      Math.max(0, ...[...te.by.values()].map((t) => t.cpu_pct));
    const shown = [...threads.values()]
      .filter((te) => (AUDIO_THREAD.test(te.t.comm) && tpeak(te) > 0) || tpeak(te) >= minCpu)
      .sort((a, b) => tpeak(b) - tpeak(a))
      .slice(0, perProcess);
    for (const te of shown) {
      const tv: Record<string, Figures | null> = {};
      for (const ph of phases) {
        const t = te.by.get(ph.id);
        tv[ph.id] = t ? fig(t) : null;
      }
      rows.push({ kind: 'thread', role: e.p.role, pid: e.p.pid, tid: te.t.tid, name: te.t.comm, values: tv });
    }
  }

  const total = (name: string, role: string, pred: (p: Row) => boolean) => {
    const values: Record<string, Figures | null> = {};
    for (const ph of phases) {
      const ps = rows.filter((r) => r.kind === 'process' && pred(r));
      values[ph.id] = {
        cpu_pct: ps.reduce((a, r) => a + (r.values[ph.id]?.cpu_pct ?? 0), 0),
        wakeups_per_s: ps.reduce((a, r) => a + (r.values[ph.id]?.wakeups_per_s ?? 0), 0),
      };
    }
    rows.push({ kind: 'total', role, pid: null, tid: null, name, values });
  };
  total('browser total', 'browser_tree', (r) => !AUDIO_SERVER_ROLES.has(r.role));
  total('audio server total', 'audio_server', (r) => AUDIO_SERVER_ROLES.has(r.role));
  total('total', 'all', () => true);
  return rows;
}

const f1 = (v: number | undefined | null) => (v === undefined || v === null ? '-' : v.toFixed(1));
const f0 = (v: number | undefined | null) => (v === undefined || v === null ? '-' : v.toFixed(0));

export function rowLabel(r: Row): string {
  if (r.kind === 'process') return `${r.name} [${r.pid}]`;
  if (r.kind === 'thread') return `  ${r.name} [${r.tid}]`;
  return r.name.toUpperCase();
}

/** Column layout of the text tables: two left-aligned label columns, then right-aligned figures. */
function columns(head: string[], body: string[][]): { line(cells: string[]): string; sep: string } {
  const widths = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
  return {
    line: (cells) =>
      cells.map((c, i) => (i < 2 ? c.padEnd(widths[i] ?? 0) : c.padStart(widths[i] ?? 0))).join('  '),
    sep: widths.map((w) => '-'.repeat(w)).join('  '),
  };
}

/** The text table: process/thread, role, then CPU % per phase, then wakeups/s per phase. */
export function formatTable(phases: PhaseSpec[], rows: Row[]): string {
  const head = [
    'process / thread',
    'role',
    ...phases.map((p) => `cpu% ${p.short ?? p.label}`),
    ...phases.map((p) => `wakeups/s ${p.short ?? p.label}`),
  ];
  const body = rows.map((r) => [
    rowLabel(r),
    r.kind === 'total' ? '' : r.role,
    ...phases.map((p) => f1(r.values[p.id]?.cpu_pct)),
    ...phases.map((p) => f0(r.values[p.id]?.wakeups_per_s)),
  ]);
  const { line, sep } = columns(head, body);
  const out = [line(head), sep];
  for (const [i, b] of body.entries()) {
    if (rows[i]?.kind === 'total' && rows[i - 1]?.kind !== 'total') out.push(sep);
    out.push(line(b));
  }
  return out.join('\n');
}

const BROWSER_NAMES: Record<string, string> = { chromium: 'Chromium', firefox: 'Firefox' };

/** "Chromium 156.0.1.2", "Firefox 128.5.0esr": a run's browser as people name it. */
export function browserTitle(s: Pick<Scenario, 'browser' | 'browser_version'>): string {
  return `${BROWSER_NAMES[s.browser] ?? s.browser}${s.browser_version ? ` ${s.browser_version}` : ''}`;
}

/** One line of the side-by-side comparison: a run's phase of one state, its three totals. */
export interface ComparisonRow {
  browser: string;
  state: PhaseState;
  /** The run's own phase id and label ("muted, with micoff" / "muted, with the pref"). */
  phase: string;
  label: string;
  browser_total: Figures;
  audio_server_total: Figures;
  total: Figures;
}

/** A run's phases with a `state`, in state order, each with the run's total rows (`buildRows`). */
export function stateRows(run: Run): ComparisonRow[] {
  const zero: Figures = { cpu_pct: 0, wakeups_per_s: 0 };
  const total = (role: string, phase: string) =>
    run.rows.find((r) => r.kind === 'total' && r.role === role)?.values[phase] ?? zero;
  const out: ComparisonRow[] = [];
  for (const state of PHASE_STATES) {
    const p = run.phases.find((x) => x.state === state);
    if (!p) continue;
    out.push({
      browser: browserTitle(run.scenario),
      state,
      phase: p.id,
      label: p.label,
      browser_total: total('browser_tree', p.id),
      audio_server_total: total('audio_server', p.id),
      total: total('all', p.id),
    });
  }
  return out;
}

/**
 * The phases with a `state`, of every run that has one, in state order per run, with the run's total
 * rows (`buildRows`): Chromium + micoff and Firefox with its pref and micoff's part side by side.
 * Empty unless at least two runs have such phases (nothing to set side by side).
 */
export function compareRuns(runs: Run[]): ComparisonRow[] {
  if (runs.filter((r) => r.phases.some((p) => p.state)).length < 2) return [];
  return runs.flatMap(stateRows);
}

/**
 * A run's summary, the first thing the demo prints: per phase with a `state` (unmuted, muted, muted and
 * released), the browser and the audio server together in % of one core, and what each phase saves
 * against the muted phase (the browser left alone; negative: it costs more). Empty when the run has no
 * such phase.
 */
export function formatSummary(run: Run): string {
  const rows = stateRows(run);
  if (rows.length === 0) return '';
  const muted = rows.find((r) => r.state === 'muted');
  const saving = (r: ComparisonRow): string => {
    if (!muted) return '';
    if (r === muted) return 'reference';
    const saved = muted.total.cpu_pct - r.total.cpu_pct;
    const share = muted.total.cpu_pct > 0 ? ` (${((100 * saved) / muted.total.cpu_pct).toFixed(0)} %)` : '';
    return `${saved.toFixed(1)}${share}`;
  };
  const head = ['phase', 'cpu%', muted ? `saving against "${muted.label}"` : ''];
  const body = rows.map((r) => [r.label, f1(r.total.cpu_pct), saving(r)]);
  const w = head.map((h, i) => Math.max(h.length, ...body.map((b) => (b[i] ?? '').length)));
  const line = (c: string[]) =>
    `  ${(c[0] ?? '').padEnd(w[0] ?? 0)}  ${(c[1] ?? '').padStart(w[1] ?? 0)}  ${c[2] ?? ''}`.trimEnd();
  return [
    `${browserTitle(run.scenario)} on ${run.scenario.server.name} ${run.scenario.server.version}: the browser + the audio server, % of one core`,
    line(head),
    ...body.map(line),
  ].join('\n');
}

/** The comparison as text: one line per run and phase, the browser named on its first line. */
export function formatComparison(rows: ComparisonRow[]): string {
  const head = ['browser', 'phase', 'browser cpu%', 'audio server cpu%', 'total cpu%', 'wakeups/s'];
  const body = rows.map((r, i) => [
    i > 0 && rows[i - 1]?.browser === r.browser ? '' : r.browser,
    r.label,
    f1(r.browser_total.cpu_pct),
    f1(r.audio_server_total.cpu_pct),
    f1(r.total.cpu_pct),
    f0(r.total.wakeups_per_s),
  ]);
  const { line, sep } = columns(head, body);
  return [line(head), sep, ...body.map(line)].join('\n');
}
