import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CpuReport, ProcessRates, ThreadRates } from '../../e2e/rig/host.ts';
import { processRates, threadRates } from '../../extension/src/shared/cpu-rates-fixture.ts';
import {
  buildRows,
  compareRuns,
  formatComparison,
  formatSummary,
  formatTable,
  type PhaseResult,
  type PhaseState,
  type Run,
} from './report.ts';

const thread = threadRates;
const proc = (pid: number, role: string, threads: ThreadRates[], comm?: string): ProcessRates =>
  processRates(pid, role, threads, {
    comm: comm ?? (role === 'audio_server' ? 'pulseaudio' : 'chromium'),
    wakeups_per_s: threads.reduce((a, t) => a + (t.wakeups_per_s ?? 0), 0),
  });
const report = (processes: ProcessRates[]): CpuReport => ({
  window_ms: 1000,
  total_cpu_pct: 0,
  processes,
  roles: [],
  gone_pids: [],
  threads_omitted: 0,
});
const phase = (id: string, processes: ProcessRates[], state?: PhaseState): PhaseResult => ({
  id,
  label: id,
  state,
  window_s: 1,
  report: report(processes),
});

test('rows: processes by role, audio threads under them, totals per phase', () => {
  const phases = [
    phase('unmuted', [
      proc(10, 'browser', [thread(10, 'chromium', 0.2)]),
      proc(20, 'renderer', [thread(21, 'AudioInputDevic', 2, 100), thread(22, 'Compositor', 0)]),
      proc(30, 'audio_server', [thread(30, 'pulseaudio', 1.5, 600)]),
    ]),
    phase('muted', [
      proc(20, 'renderer', [thread(21, 'AudioInputDevic', 1.9, 99)]),
      proc(30, 'audio_server', []),
    ]),
  ];
  const rows = buildRows(phases);
  assert.deepEqual(
    rows.map((r) => `${r.kind}:${r.name}`),
    [
      'process:chromium',
      'thread:AudioInputDevic',
      'process:chromium',
      'process:pulseaudio',
      'thread:pulseaudio',
      'total:browser total',
      'total:audio server total',
      'total:total',
    ],
  );
  assert.equal(rows[0]?.role, 'renderer');
  assert.deepEqual(rows[1]?.values.muted, { cpu_pct: 1.9, wakeups_per_s: 99 });
  assert.equal(rows[2]?.values.muted, null, 'the browser process is missing in the muted phase');
  const total = rows.at(-1);
  assert.equal(total?.values.unmuted?.cpu_pct, 3.7);
  assert.equal(total?.values.unmuted?.wakeups_per_s, 700);

  const table = formatTable(phases, rows).split('\n');
  assert.match(
    table[0] ?? '',
    /process \/ thread\s+role\s+cpu% unmuted\s+cpu% muted\s+wakeups\/s unmuted\s+wakeups\/s muted/,
  );
  assert.match(
    table.find((l) => l.includes('AudioInputDevic')) ?? '',
    /AudioInputDevic \[21\]\s+renderer\s+2\.0\s+1\.9\s+100\s+99/,
  );
  assert.ok(table.some((l) => /^chromium \[10\].*-/.test(l)));
});

test("rows: Firefox's content process first, its audio threads (cubeb, GraphRunner) under it", () => {
  const rows = buildRows([
    phase('unmuted', [
      proc(1, 'browser', [thread(1, 'firefox-esr', 0.1), thread(2, 'threaded-ml', 0.3, 50)], 'firefox-esr'),
      proc(
        5,
        'content',
        [
          thread(6, 'GraphRunner', 1.2, 100),
          thread(7, 'DOM Worker', 0.1),
          thread(8, 'WebrtcC~read #1', 0.2, 60),
        ],
        'Web Content',
      ),
      proc(30, 'audio_server', [thread(30, 'pulseaudio', 1.5, 600)]),
    ]),
  ]);
  assert.deepEqual(
    rows.filter((r) => r.kind !== 'total').map((r) => `${r.kind}:${r.name}`),
    [
      'process:Web Content',
      'thread:GraphRunner',
      'thread:WebrtcC~read #1',
      'process:firefox-esr',
      'thread:threaded-ml',
      'process:pulseaudio',
      'thread:pulseaudio',
    ],
  );
});

/** A run of one browser: its phases with states, totals from buildRows. */
const runOf = (browser: string, version: string, phases: PhaseResult[]): Run => ({
  scenario: {
    browser,
    browser_version: version,
    server: { kind: 'pulseaudio', name: 'pulseaudio', version: '16.1' },
    capture_latency: 'default',
    notes: [],
  },
  phases,
  rows: buildRows(phases),
});
const tree = (browserCpu: number, serverCpu: number, wakeups: number) => [
  proc(20, 'renderer', [thread(21, 'AudioInputDevic', browserCpu, wakeups / 2)]),
  proc(30, 'audio_server', [thread(30, 'pulseaudio', serverCpu, wakeups / 2)]),
];

test('compareRuns: the phases with a state, per run in state order, with the browser and server totals', () => {
  const chromium = runOf('chromium', '156.0.1.2', [
    phase('unmuted', tree(13.5, 2.5, 2400), 'unmuted'),
    phase('muted', tree(16, 2.7, 1900), 'muted'),
    phase('muted_micoff', tree(2.7, 0.2, 190), 'released'),
    phase('unmuted_40ms', tree(9, 1, 800)), // no state: not compared
  ]);
  // Firefox's phases in another order, one of them missing (its configuration stopped early).
  const firefox = runOf('firefox', '128.5.0esr', [
    phase('muted', tree(6, 1.1, 700), 'muted'),
    phase('unmuted', tree(5, 1, 650), 'unmuted'),
  ]);
  const failed: Run = { ...runOf('firefox', '', []), error: 'not installed' };
  const rows = compareRuns([chromium, firefox, failed]);
  assert.deepEqual(
    rows.map((r) => `${r.browser}|${r.state}|${r.phase}`),
    [
      'Chromium 156.0.1.2|unmuted|unmuted',
      'Chromium 156.0.1.2|muted|muted',
      'Chromium 156.0.1.2|released|muted_micoff',
      'Firefox 128.5.0esr|unmuted|unmuted',
      'Firefox 128.5.0esr|muted|muted',
    ],
  );
  assert.deepEqual(rows[2]?.browser_total, { cpu_pct: 2.7, wakeups_per_s: 95 });
  assert.deepEqual(rows[2]?.audio_server_total, { cpu_pct: 0.2, wakeups_per_s: 95 });
  assert.equal(rows[4]?.total.cpu_pct, 7.1);
  assert.equal(rows[4]?.total.wakeups_per_s, 700);

  const text = formatComparison(rows).split('\n');
  assert.match(
    text[0] ?? '',
    /^browser\s+phase\s+browser cpu%\s+audio server cpu%\s+total cpu%\s+wakeups\/s$/,
  );
  assert.match(text[2] ?? '', /^Chromium 156\.0\.1\.2\s+unmuted\s+13\.5\s+2\.5\s+16\.0\s+2400$/);
  // The browser is named on its first line only.
  assert.match(text[3] ?? '', /^\s+muted\s+16\.0\s+2\.7\s+18\.7\s+1900$/);
  assert.match(text[5] ?? '', /^Firefox 128\.5\.0esr\s+unmuted\s+5\.0\s+1\.0\s+6\.0\s+650$/);
  assert.equal(text.length, 7);

  // One run left (the other failed): nothing to set side by side.
  assert.deepEqual(compareRuns([chromium, failed]), []);
  assert.deepEqual(compareRuns([chromium]), []);
});

test('formatSummary: per phase the browser + audio server and the saving against the muted phase', () => {
  const chromium = runOf('chromium', '156.0.1.2', [
    phase('unmuted', tree(13.5, 2.5, 2400), 'unmuted'),
    { ...phase('muted', tree(16, 2.7, 1900), 'muted'), label: 'muted, without micoff' },
    { ...phase('muted_micoff', tree(2.7, 0.2, 190), 'released'), label: 'muted, with micoff' },
    phase('unmuted_40ms', tree(9, 1, 800)), // no state: not in the summary
  ]);
  assert.deepEqual(formatSummary(chromium).split('\n'), [
    'Chromium 156.0.1.2 on pulseaudio 16.1: the browser + the audio server, % of one core',
    '  phase                  cpu%  saving against "muted, without micoff"',
    '  unmuted                16.0  2.7 (14 %)',
    '  muted, without micoff  18.7  reference',
    '  muted, with micoff      2.9  15.8 (84 %)',
  ]);
});

test('formatSummary: a phase that costs more saves a negative figure; no muted phase, no saving', () => {
  const costlier = runOf('firefox', '128.5.0esr', [
    phase('unmuted', tree(5, 1, 650), 'unmuted'),
    phase('muted', tree(3, 1, 700), 'muted'),
  ]);
  assert.match(formatSummary(costlier).split('\n')[2] ?? '', /^ {2}unmuted\s+6\.0 {2}-2\.0 \(-50 %\)$/);
  const noMuted = runOf('chromium', '', [phase('unmuted', tree(5, 1, 650), 'unmuted')]);
  assert.deepEqual(formatSummary(noMuted).split('\n').slice(1), ['  phase    cpu%', '  unmuted   6.0']);
  assert.equal(formatSummary(runOf('chromium', '', [phase('x', tree(1, 1, 1))])), '');
});
