// A self-contained HTML page (inline SVG, no scripts, no external assets) with the demo's figures:
// grouped horizontal bars (one bar per phase) for CPU % and wakeups/s, and the same table, per run;
// with more than one run, the side-by-side comparison of their totals first.
import type { ComparisonRow, Figures, PhaseSpec, Row, Run } from './report.ts';
import { browserTitle, formatComparison, formatTable, rowLabel } from './report.ts';

const COLORS = ['#d9480f', '#1971c2', '#2f9e44', '#7048e8', '#e8590c', '#0c8599'];

const esc = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

/** One group of bars: its label and a value per series. */
interface BarGroup {
  label: string;
  bold: boolean;
  values: Record<string, Figures | null>;
}

function bars(title: string, unit: string, series: PhaseSpec[], groups: BarGroup[], key: keyof Figures) {
  const labelW = 300;
  const chartW = 520;
  const barH = 12;
  const groupGap = 10;
  const groupH = series.length * barH + groupGap;
  const top = 40;
  const max = Math.max(1e-9, ...groups.flatMap((g) => series.map((p) => g.values[p.id]?.[key] ?? 0)));
  const h = top + groups.length * groupH + 20;
  const parts: string[] = [
    // Wide enough for the bars and their values, and for the legend (170 px per series).
    `<svg xmlns="http://www.w3.org/2000/svg" width="${Math.max(labelW + chartW + 80, labelW + series.length * 170)}" height="${h}" role="img" aria-label="${esc(title)}">`,
    `<text x="0" y="16" font-weight="bold" font-size="14">${esc(title)}</text>`,
  ];
  series.forEach((p, i) => {
    const x = labelW + i * 170;
    parts.push(
      `<rect x="${x}" y="24" width="10" height="10" fill="${COLORS[i % COLORS.length]}"/>`,
      `<text x="${x + 14}" y="33" font-size="11">${esc(p.label)}</text>`,
    );
  });
  groups.forEach((g, gi) => {
    const y0 = top + gi * groupH;
    parts.push(
      `<text x="${labelW - 8}" y="${y0 + (series.length * barH) / 2 + 4}" text-anchor="end" font-size="11" font-weight="${g.bold ? 'bold' : 'normal'}">${esc(g.label)}</text>`,
    );
    series.forEach((p, i) => {
      const v = g.values[p.id]?.[key];
      const w = v ? Math.max(1, (v / max) * chartW) : 0;
      const y = y0 + i * barH;
      parts.push(
        `<rect x="${labelW}" y="${y}" width="${w.toFixed(1)}" height="${barH - 2}" fill="${COLORS[i % COLORS.length]}"/>`,
        `<text x="${labelW + w + 4}" y="${y + barH - 3}" font-size="10">${v === undefined || v === null ? '-' : `${v.toFixed(key === 'cpu_pct' ? 1 : 0)} ${unit}`}</text>`,
      );
    });
  });
  parts.push('</svg>');
  return parts.join('\n');
}

const rowGroups = (rows: Row[]): BarGroup[] =>
  rows.map((r) => ({
    label: `${rowLabel(r).trim()}${r.kind === 'total' ? '' : ` (${r.role})`}`,
    bold: r.kind !== 'thread',
    values: r.values,
  }));

/** The comparison's bars: per browser and phase, the browser's and the audio server's totals. */
function comparisonSection(rows: ComparisonRow[]): string {
  const series: PhaseSpec[] = [
    { id: 'browser', label: 'browser' },
    { id: 'audio_server', label: 'audio server' },
  ];
  const groups: BarGroup[] = rows.map((r) => ({
    label: `${r.browser}: ${r.label}`,
    bold: r.state === 'released', // what the release brings the muted call down to
    values: { browser: r.browser_total, audio_server: r.audio_server_total },
  }));
  return `<section>
<h2>Side by side</h2>
<p>Totals of each browser's process tree and of the audio server, in the same run on the same audio server. "Released": micoff's release on mute in Chromium, Firefox's own release pref (as <code>micoff-host install --firefox-release</code> sets it) and micoff's part (the muted call's senders off the wire) in Firefox.</p>
${bars('CPU (% of one core)', '%', series, groups, 'cpu_pct')}
${bars('Wakeups per second', '/s', series, groups, 'wakeups_per_s')}
<pre>${esc(formatComparison(rows))}</pre>
</section>`;
}

export function renderHtml(
  runs: Run[],
  meta: { created: string; command: string; comparison?: ComparisonRow[] },
): string {
  const sections = runs.map((run) => {
    const s = run.scenario;
    const failed = run.error
      ? `<p class="failed">${esc(browserTitle(s))}: FAILED: ${esc(run.error)}</p>`
      : '';
    if (run.phases.length === 0) return `<section>\n<h2>${esc(s.browser)}</h2>\n${failed}\n</section>`;
    return `<section>
<h2>${esc(s.browser)} ${esc(s.browser_version ?? '')} on ${esc(s.server.name)} ${esc(s.server.version)}, capture latency ${esc(s.capture_latency)}</h2>
${failed}<p>${run.phases.map((p) => `${esc(p.label)}: ${p.window_s} s window`).join('; ')}. CPU in % of one core; wakeups = voluntary + involuntary context switches per second. Measured by <code>micoff-host sample</code>.</p>
<ul>${s.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul>
${bars('CPU (% of one core)', '%', run.phases, rowGroups(run.rows), 'cpu_pct')}
${bars('Wakeups per second', '/s', run.phases, rowGroups(run.rows), 'wakeups_per_s')}
<pre>${esc(formatTable(run.phases, run.rows))}</pre>
</section>`;
  });
  const comparison = meta.comparison?.length ? comparisonSection(meta.comparison) : '';
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>micoff demo ${esc(meta.created)}</title>
<style>body{font-family:system-ui,sans-serif;margin:2em;color:#222}pre{font-size:12px;background:#f6f6f6;padding:1em;overflow:auto}svg{display:block;margin:1em 0}.failed{color:#c92a2a;font-weight:bold}</style>
</head><body>
<h1>micoff demo: what an open microphone costs</h1>
<p>${esc(meta.created)} &middot; <code>${esc(meta.command)}</code></p>
${comparison}${sections.join('\n')}
</body></html>
`;
}
