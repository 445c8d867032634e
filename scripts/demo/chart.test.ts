import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { CpuReport, ProcessRates } from '../../e2e/rig/host.ts';
import { renderHtml } from './chart.ts';
import { buildRows, compareRuns, type PhaseResult, type PhaseState, type Run } from './report.ts';

const proc = (pid: number, role: string, cpu: number): ProcessRates => ({
  pid,
  ppid: 1,
  comm: role === 'audio_server' ? 'pulseaudio' : 'browser-proc',
  role,
  cpu_pct: cpu,
  user_pct: cpu,
  system_pct: 0,
  run_time_ns: null,
  run_time_pct: null,
  wakeups_per_s: cpu * 100,
  voluntary_ctxt_per_s: null,
  involuntary_ctxt_per_s: null,
  read_syscalls_per_s: null,
  write_syscalls_per_s: null,
  thread_count: 0,
  threads: [],
});
const report = (browserCpu: number, serverCpu: number): CpuReport => ({
  window_ms: 1000,
  total_cpu_pct: browserCpu + serverCpu,
  processes: [proc(10, 'renderer', browserCpu), proc(30, 'audio_server', serverCpu)],
  roles: [],
  gone_pids: [],
  threads_omitted: 0,
});
const phase = (id: string, label: string, state: PhaseState, b: number, s: number): PhaseResult => ({
  id,
  label,
  state,
  window_s: 5,
  report: report(b, s),
});
const run = (browser: string, phases: PhaseResult[], error?: string): Run => ({
  scenario: {
    browser,
    browser_version: browser === 'firefox' ? '128.5.0esr' : '156.0.1.2',
    server: { kind: 'pulseaudio', name: 'pulseaudio', version: '16.1' },
    capture_latency: 'default',
    notes: [`${browser} <note> & more`],
  },
  phases,
  rows: buildRows(phases),
  ...(error ? { error } : {}),
});

const meta = { created: '2025-01-01T00:00:00.000Z', command: 'npm run demo -- --browser both' };
const chromium = run('chromium', [
  phase('unmuted', 'unmuted', 'unmuted', 13.5, 2.5),
  phase('muted', 'muted, without micoff', 'muted', 16.3, 2.7),
  phase('muted_micoff', 'muted, with micoff', 'released', 2.7, 0.2),
]);
const firefox = run('firefox', [
  phase('unmuted', 'unmuted', 'unmuted', 5, 1),
  phase('muted', 'muted, without the pref', 'muted', 5.5, 1.1),
  phase('muted_pref', 'muted, with the pref', 'released', 0.9, 0.1),
]);

test('renderHtml: one run, no comparison section; text is escaped', () => {
  const html = renderHtml([chromium], meta);
  assert.doesNotMatch(html, /Side by side/);
  assert.equal((html.match(/<svg /g) ?? []).length, 2, 'a CPU and a wakeups chart');
  assert.match(html, /chromium &lt;note&gt; &amp; more/);
  assert.match(html, /muted, with micoff: 5 s window/);
  // Three phases' legends (170 px each from x 300) fit in the default width.
  assert.match(html, /<svg [^>]*width="900"/);
  const four = run('chromium', [
    ...chromium.phases,
    phase('unmuted_40ms', 'unmuted, 40 ms', 'unmuted', 9, 1),
  ]);
  assert.match(renderHtml([four], meta), /<svg [^>]*width="980"/, 'four legends: wider');
});

test('renderHtml: Chromium and Firefox side by side, then each run with its own charts', () => {
  const html = renderHtml([chromium, firefox], { ...meta, comparison: compareRuns([chromium, firefox]) });
  const side = html.indexOf('<h2>Side by side</h2>');
  assert.ok(side >= 0 && side < html.indexOf('<h2>chromium 156.0.1.2'), 'the comparison comes first');
  assert.ok(html.indexOf('<h2>chromium 156.0.1.2') < html.indexOf('<h2>firefox 128.5.0esr'));
  assert.equal((html.match(/<svg /g) ?? []).length, 6, 'two charts each: comparison, chromium, firefox');
  // The comparison's bars: one group per browser and phase, labelled with both.
  for (const label of [
    'Chromium 156.0.1.2: muted, with micoff',
    'Firefox 128.5.0esr: muted, without the pref',
    'Firefox 128.5.0esr: muted, with the pref',
  ]) {
    assert.ok(html.includes(`>${label}</text>`), label);
  }
  // Firefox released: 0.9 % in the browser, its bar drawn with its value.
  assert.match(html, />0\.9 %<\/text>/);
  assert.match(html, /Firefox 128\.5\.0esr\s+unmuted\s+5\.0\s+1\.0\s+6\.0\s+600/);
});

test('renderHtml: a configuration that failed says so, the others are drawn', () => {
  const failed = run('firefox', [], '/usr/bin/firefox-esr is not installed');
  const html = renderHtml([chromium, failed], { ...meta, comparison: compareRuns([chromium, failed]) });
  assert.match(html, /class="failed">Firefox 128\.5\.0esr: FAILED: \/usr\/bin\/firefox-esr is not installed/);
  assert.doesNotMatch(html, /Side by side/, 'nothing to set beside Chromium');
  assert.equal((html.match(/<svg /g) ?? []).length, 2, 'Chromium’s two charts');
  // A run stopped part-way keeps the phases it measured, and says why it stopped.
  const partial = run('firefox', firefox.phases.slice(0, 1), 'Firefox crashed');
  const html2 = renderHtml([partial], meta);
  assert.match(html2, /FAILED: Firefox crashed/);
  assert.equal((html2.match(/<svg /g) ?? []).length, 2);
});
