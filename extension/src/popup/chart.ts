// The audio path's CPU over the last minutes as inline SVG (no chart library): a line of micoff-host's
// samples (the host keeps the history), a shaded band per released interval, a tick per mute / release /
// unmute; colours from ui.css's variables (light and dark). `chartModel` is the geometry (pure, unit-tested),
// `chartSvg` the DOM; `savingsLines` the text figures beside it (docs/design/popup-savings.md).
import type { HistorySnapshot, MarkKind, PowerReading } from '../shared/protocol.ts';

export const CHART = { width: 356, height: 96, top: 6, bottom: 14 } as const;

export interface ChartModel {
  /** SVG polyline points; '' with fewer than two samples. */
  line: string;
  /** The y axis's top, % of one core (at least 1). */
  max_pct: number;
  released: { x: number; width: number; open: boolean }[];
  marks: { x: number; kind: MarkKind }[];
  now_pct: number | null;
  peak_pct: number | null;
}

const round = (v: number) => Math.round(v * 10) / 10;

export function chartModel(h: HistorySnapshot, w = CHART.width, ht = CHART.height): ChartModel {
  const from = h.now_ms - h.span_ms;
  const x = (t: number) => round(Math.min(w, Math.max(0, ((t - from) / h.span_ms) * w)));
  const peak = h.points.reduce((m, p) => Math.max(m, p.pct), 0);
  const max = Math.max(1, Math.ceil(peak * 1.1));
  const plot = ht - CHART.top - CHART.bottom;
  const y = (pct: number) => round(CHART.top + plot - (Math.min(pct, max) / max) * plot);
  return {
    line: h.points.length < 2 ? '' : h.points.map((p) => `${x(p.t_ms)},${y(p.pct)}`).join(' '),
    max_pct: max,
    released: h.released.map((r) => {
      const x0 = x(r.start_ms);
      return { x: x0, width: Math.max(1, x(r.end_ms ?? h.now_ms) - x0), open: r.end_ms === null };
    }),
    marks: h.marks.map((m) => ({ x: x(m.t_ms), kind: m.kind })),
    now_pct: h.points.at(-1)?.pct ?? null,
    peak_pct: h.points.length ? peak : null,
  };
}

const SVG = 'http://www.w3.org/2000/svg';
function s(tag: string, attrs: Record<string, string | number>, text?: string): SVGElement {
  const el = document.createElementNS(SVG, tag);
  for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
  if (text !== undefined) el.textContent = text;
  return el;
}

const MARK_LABEL: Record<MarkKind, string> = { mute: 'mute', release: 'released', unmute: 'unmute' };

export function chartSvg(h: HistorySnapshot): SVGElement {
  const m = chartModel(h);
  const { width, height, bottom } = CHART;
  const minutes = Math.round(h.span_ms / 60_000);
  const desc =
    m.now_pct === null
      ? 'No samples yet.'
      : `Now ${m.now_pct.toFixed(1)} %, peak ${(m.peak_pct ?? 0).toFixed(1)} % over the last ${minutes} min; ` +
        `${m.released.length} released interval(s), ${m.marks.length} mark(s).`;
  const svg = s('svg', {
    viewBox: `0 0 ${width} ${height}`,
    width,
    height,
    role: 'img',
    'aria-labelledby': 'chart-title chart-desc',
    class: 'chart',
  });
  svg.append(
    s('title', { id: 'chart-title' }, `Audio path CPU, % of one core, last ${minutes} min`),
    s('desc', { id: 'chart-desc' }, desc),
  );
  for (const r of m.released) {
    const band = s('rect', { class: 'released', x: r.x, y: 0, width: r.width, height: height - bottom });
    band.append(s('title', {}, r.open ? 'released (now)' : 'released'));
    svg.append(band);
  }
  svg.append(
    s('line', { class: 'axis', x1: 0, x2: width, y1: height - bottom, y2: height - bottom }),
    s('text', { class: 'label', x: 2, y: CHART.top + 8 }, `${m.max_pct} %`),
    s('text', { class: 'label', x: 2, y: height - 2 }, `−${minutes} min`),
    s('text', { class: 'label', x: width - 2, y: height - 2, 'text-anchor': 'end' }, 'now'),
  );
  for (const k of m.marks) {
    const tick = s('line', { class: `mark ${k.kind}`, x1: k.x, x2: k.x, y1: 0, y2: height - bottom });
    tick.append(s('title', {}, MARK_LABEL[k.kind]));
    svg.append(tick);
  }
  if (m.line) svg.append(s('polyline', { class: 'cpu', points: m.line }));
  return svg;
}

export type PowerState = { ok: true; reading: PowerReading } | { ok: false; message: string } | null;

/** Where a power reading came from, in words. */
const POWER_SOURCE: Record<NonNullable<PowerReading['source']>, string> = {
  rapl: "the CPU's power meter",
  battery: 'the battery',
};

/** Said when the machine reports no power (the host's reasons go in `energy_detail`, a tooltip). */
export const NO_POWER_READING =
  'Energy: this machine does not report its power draw, so the saving is counted in CPU-seconds only.';

/** "≈ N CPU-s saved" and the energy line (or why there is none); `energy_detail`: the host's own words
 * for why, when there is no reading. */
export function savingsLines(
  savedCpuS: number,
  power: PowerState,
): { cpu: string; energy: string; energy_detail: string | null } {
  // Below zero (the released time has cost more than the call before the mute, so far): no "saved".
  const cpu =
    savedCpuS <= -0.05
      ? 'Nothing saved yet since the browser started: the released time has cost no less than before the mute.'
      : `≈ ${Math.max(0, savedCpuS).toFixed(savedCpuS < 10 ? 1 : 0)} CPU-s saved since the browser started`;
  if (power === null)
    return { cpu, energy: 'Energy: asking micoff-host for a power reading…', energy_detail: null };
  if (!power.ok) return { cpu, energy: `Energy: no power reading (${power.message}).`, energy_detail: null };
  const r = power.reading;
  const from = r.source ? POWER_SOURCE[r.source] : 'the machine';
  if (r.watts === null)
    return { cpu, energy: NO_POWER_READING, energy_detail: r.unavailable.join('; ') || null };
  if (r.watts_per_busy_core === null)
    return {
      cpu,
      energy: `Energy: ${r.watts.toFixed(1)} W measured by ${from}, too few busy cores to split it per core.`,
      energy_detail: null,
    };
  const joules = Math.max(0, savedCpuS) * r.watts_per_busy_core;
  return {
    cpu,
    energy:
      `≈ ${joules.toFixed(joules < 10 ? 1 : 0)} J (${(joules / 3600).toFixed(4)} Wh) saved: CPU-s × ` +
      `${r.watts_per_busy_core.toFixed(1)} W per busy core (${from} read ${r.watts.toFixed(1)} W over ` +
      `${(r.busy_cores ?? 0).toFixed(2)} busy cores)`,
    energy_detail: null,
  };
}
