// A self-contained HTML page (inline SVG, no scripts, no external assets) with the demo's figures:
// grouped horizontal bars (one bar per phase) for CPU % and wakeups/s, and the same table.
import type { PhaseSpec, Row, Run } from './report.ts';
import { formatTable, rowLabel } from './report.ts';

const COLORS = ['#d9480f', '#1971c2', '#2f9e44', '#7048e8', '#e8590c', '#0c8599'];

const esc = (s: string) =>
  s.replace(
    /[&<>"']/g,
    (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c] ?? c,
  );

function bars(
  title: string,
  unit: string,
  phases: PhaseSpec[],
  rows: Row[],
  key: 'cpu_pct' | 'wakeups_per_s',
) {
  const labelW = 300;
  const chartW = 520;
  const barH = 12;
  const groupGap = 10;
  const groupH = phases.length * barH + groupGap;
  const top = 40;
  const max = Math.max(1e-9, ...rows.flatMap((r) => phases.map((p) => r.values[p.id]?.[key] ?? 0)));
  const h = top + rows.length * groupH + 20;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${labelW + chartW + 80}" height="${h}" role="img" aria-label="${esc(title)}">`,
    `<text x="0" y="16" font-weight="bold" font-size="14">${esc(title)}</text>`,
  ];
  phases.forEach((p, i) => {
    const x = labelW + i * 170;
    parts.push(
      `<rect x="${x}" y="24" width="10" height="10" fill="${COLORS[i % COLORS.length]}"/>`,
      `<text x="${x + 14}" y="33" font-size="11">${esc(p.label)}</text>`,
    );
  });
  rows.forEach((r, gi) => {
    const y0 = top + gi * groupH;
    const weight = r.kind === 'thread' ? 'normal' : 'bold';
    parts.push(
      `<text x="${labelW - 8}" y="${y0 + (phases.length * barH) / 2 + 4}" text-anchor="end" font-size="11" font-weight="${weight}">${esc(
        `${rowLabel(r).trim()}${r.kind === 'total' ? '' : ` (${r.role})`}`,
      )}</text>`,
    );
    phases.forEach((p, i) => {
      const v = r.values[p.id]?.[key];
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

export function renderHtml(runs: Run[], meta: { created: string; command: string }): string {
  const sections = runs.map((run) => {
    const s = run.scenario;
    return `<section>
<h2>${esc(s.browser)} ${esc(s.browser_version ?? '')} on ${esc(s.server.name)} ${esc(s.server.version)}, capture latency ${esc(s.capture_latency)}</h2>
<p>${run.phases.map((p) => `${esc(p.label)}: ${p.window_s} s window`).join('; ')}. CPU in % of one core; wakeups = voluntary + involuntary context switches per second. Measured by <code>micoff-host sample</code>.</p>
<ul>${s.notes.map((n) => `<li>${esc(n)}</li>`).join('')}</ul>
${bars('CPU (% of one core)', '%', run.phases, run.rows, 'cpu_pct')}
${bars('Wakeups per second', '/s', run.phases, run.rows, 'wakeups_per_s')}
<pre>${esc(formatTable(run.phases, run.rows))}</pre>
</section>`;
  });
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>micoff demo ${esc(meta.created)}</title>
<style>body{font-family:system-ui,sans-serif;margin:2em;color:#222}pre{font-size:12px;background:#f6f6f6;padding:1em;overflow:auto}svg{display:block;margin:1em 0}</style>
</head><body>
<h1>micoff demo: what an open microphone costs</h1>
<p>${esc(meta.created)} &middot; <code>${esc(meta.command)}</code></p>
${sections.join('\n')}
</body></html>
`;
}
