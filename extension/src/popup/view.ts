// Popup rendering: data in, DOM out. Each function owns one section's body.

import type { CpuView } from '../shared/cpu-view.ts';
import type { DoctorStatus } from '../shared/doctor.ts';
import { commandBox, fmtPct, h } from '../shared/dom.ts';
import type { HostStatus } from '../shared/host-status.ts';
import type { AudioSnapshot, DoctorResult, TabReleaseView } from '../shared/messages/popup-background.ts';

/** A table with one header row over `rows`; a header given as `[label, 'num']` is right-aligned
 * like the numbers in its column. */
function table(head: ([string] | [string, 'num'])[], rows: Node[]): Node {
  return h(
    'table',
    null,
    h(
      'thead',
      null,
      h('tr', null, ...head.map(([label, num]) => h('th', num ? { class: num } : null, label))),
    ),
    h('tbody', null, ...rows),
  );
}

export function hostPill(s: HostStatus): { text: string; cls: string } {
  switch (s.state) {
    case 'connected':
      return { text: `host ${s.version?.host_version ?? ''}`.trim(), cls: 'pill ok' };
    case 'connecting':
      return { text: 'connecting…', cls: 'pill' };
    case 'not_installed':
      return { text: 'host not installed', cls: 'pill warn' };
    case 'error':
      return { text: 'host error', cls: 'pill bad' };
    case 'stopped':
      return { text: 'stopped', cls: 'pill' };
  }
}

export function hostNotice(s: HostStatus, onRetry: () => void): Node[] {
  if (s.state === 'connected' || s.state === 'connecting') return [];
  const retry = h('button', { type: 'button' }, 'Retry now');
  retry.addEventListener('click', onRetry);
  const retryIn = s.retry_at_ms ? Math.max(0, Math.round((s.retry_at_ms - Date.now()) / 1000)) : null;
  const title =
    s.state === 'not_installed'
      ? 'micoff-host is not installed for this browser'
      : 'Cannot talk to micoff-host';
  return [
    h(
      'div',
      { class: 'notice' },
      h('b', null, title),
      s.state === 'not_installed'
        ? 'Measurements and device checks need the native host. Install it, then retry:'
        : s.message,
      s.fix_command ? commandBox(s.fix_command) : null,
      h(
        'div',
        { class: 'actions' },
        retry,
        retryIn !== null ? h('span', { class: 'muted' }, ` or wait ${retryIn} s`) : null,
      ),
    ),
  ];
}

export function tabState(view: TabReleaseView | null): string {
  if (!view) return 'No microphone in use on this tab.';
  const since = view.since_ms ? ` since ${new Date(view.since_ms).toLocaleTimeString()}` : '';
  switch (view.state) {
    case 'capturing':
      if (view.muted) {
        const at = view.muted_since_ms ? ` since ${new Date(view.muted_since_ms).toLocaleTimeString()}` : '';
        return `Muted${at}, microphone still open.`;
      }
      return `Microphone on${since}.`;
    case 'released':
      return `Muted: microphone released${since}.`;
    case 'not_released':
      return `Muted, microphone kept open${view.reason ? `: ${view.reason}` : ''}.`;
  }
}

export function cpuTable(v: CpuView): Node[] {
  const totals = h(
    'div',
    { class: 'totals' },
    h('span', null, 'Browser ', h('b', null, `${fmtPct(v.browser_cpu_pct)} %`)),
    h('span', null, 'Audio server ', h('b', null, `${fmtPct(v.audio_server_cpu_pct)} %`)),
  );
  if (v.threads.length === 0) return [totals, h('div', { class: 'muted' }, 'No audio threads busy.')];
  const rows = v.threads.map((t) =>
    h(
      'tr',
      null,
      h('td', null, t.thread),
      h('td', { class: 'muted' }, `${t.role} ${t.pid}`),
      h('td', { class: 'num' }, fmtPct(t.cpu_pct)),
      h('td', { class: 'num' }, Math.round(t.wakeups_per_s)),
    ),
  );
  return [totals, table([['thread'], ['process'], ['CPU %', 'num'], ['wakeups/s', 'num']], rows)];
}

export function streamsTable(a: AudioSnapshot): Node[] {
  if (!a.connected) return [h('div', { class: 'muted' }, a.reason ?? 'Audio server not reachable.')];
  const server = h(
    'div',
    { class: 'muted' },
    `${a.server?.server_name ?? 'server'} ${a.server?.server_version ?? ''}`,
    a.server?.default_source_name ? ` · default source ${a.server.default_source_name}` : '',
  );
  const rec = a.streams.filter((s) => s.kind === 'record');
  if (rec.length === 0)
    return [server, h('div', null, 'No record streams: nothing holds a microphone open.')];
  const rows = rec.map((s) =>
    h(
      'tr',
      null,
      h('td', null, s.application_name ?? s.application_process_binary ?? `#${s.index}`),
      h('td', { class: 'num' }, s.application_process_id ?? ''),
      h('td', null, s.device_name ?? `source ${s.device_index}`),
      h('td', { class: 'num' }, (s.buffer_latency_us / 1000).toFixed(0)),
      h('td', null, s.corked ? 'corked' : s.muted ? 'muted' : 'live'),
    ),
  );
  return [server, table([['app'], ['pid', 'num'], ['source'], ['buf ms', 'num'], ['state']], rows)];
}

/** The doctor's findings, labelled "ok / worth changing / not applicable / failed" like the CLI. Only a finding's
 * runnable command gets a copy button; its hint is prose and shown as text. */
export function doctorList(r: DoctorResult): Node[] {
  if (!r.ok) return [h('div', { class: 'muted' }, `Not available: ${r.message}`)];
  if (r.findings.length === 0) return [h('div', null, 'Nothing to fix.')];
  const cls: Record<DoctorStatus, string> = {
    ok: 'pill ok',
    worth_changing: 'pill warn',
    failed: 'pill warn',
    not_applicable: 'pill',
    other: 'pill',
  };
  return r.findings.map((f) =>
    h(
      'div',
      { class: 'finding' },
      h('span', { class: cls[f.status] }, f.label),
      h('b', null, f.title),
      f.detail ? h('div', { class: 'muted' }, f.detail) : null,
      f.command ? commandBox(f.command) : null,
      f.hint ? h('div', { class: 'muted hint' }, f.hint) : null,
    ),
  );
}
