// Popup rendering: data in, DOM out. Each function owns one section's body.

import { microphoneNameOf, programNameOf } from '../shared/browser-streams.ts';
import type { CpuView } from '../shared/cpu-view.ts';
import type { DoctorStatus } from '../shared/doctor.ts';
import { commandBox, fmtPct, h } from '../shared/dom.ts';
import type { HostStatus } from '../shared/host-status.ts';
import type { AudioSnapshot, DoctorResult, TabReleaseView } from '../shared/messages/popup-background.ts';
import { micStateOf } from '../shared/mic-state.ts';
import { AUDIO_SERVER_ROLES } from '../shared/protocol.ts';

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

const clock = (ms: number) => new Date(ms).toLocaleTimeString();

/** Connected again after a connection dropped: when and why micoff-host was restarted (the page side
 * went on meanwhile); null otherwise. */
export function hostRestartLine(s: HostStatus): string | null {
  if (s.state !== 'connected' || !s.last_drop) return null;
  return `micoff-host restarted at ${clock(s.last_drop.at_ms)} (the last one ended: ${s.last_drop.reason})`;
}

export function hostRestarted(s: HostStatus): Node[] {
  const line = hostRestartLine(s);
  return line ? [h('div', { class: 'muted', id: 'host-restarted' }, line)] : [];
}

/** The tab's first line: the microphone's state (shared/mic-state.ts), said where it is known. On
 * Firefox, whether a muted microphone is still open is micoff's check at the audio server
 * (native-release-line.ts says the details), never assumed from the page world's "capturing". */
export function tabState(view: TabReleaseView | null): string {
  if (!view) return 'No microphone in use on this tab.';
  const since = view.since_ms ? ` since ${clock(view.since_ms)}` : '';
  const mutedAt = view.muted_since_ms ? ` since ${clock(view.muted_since_ms)}` : '';
  switch (micStateOf(view)) {
    case 'on':
      return `Microphone on${since}.`;
    case 'muted_open': {
      const firefox = view.native_release?.now.state;
      if (firefox === undefined) {
        return `Muted${mutedAt}, microphone still open: micoff releases it once its release delay has passed.`;
      }
      if (firefox === 'pending') {
        return `Muted${mutedAt}, microphone still open: Firefox's own release closes it after its delay.`;
      }
      if (firefox === 'not_in_effect') return `Muted${mutedAt}, microphone still open.`;
      return `Muted${mutedAt}.`; // idle (the check came in after the mute) or unknown: not seen either way
    }
    case 'released':
      return `Muted: microphone released${since}.`;
    case 'released_by_firefox':
      return `Muted${mutedAt}: Firefox released the microphone.`;
    case 'kept':
      return `Muted, microphone kept open${view.reason ? `: ${view.reason}` : ''}.`;
  }
}

/** What a figure that needs micoff-host says while it is not connected (after a label, lower case). */
export function needsHost(s: HostStatus): string {
  return s.state === 'connecting' ? 'waiting for micoff-host…' : 'needs micoff-host (see above).';
}

/** The same, on a line of its own. */
export const needsHostLine = (s: HostStatus): string => {
  const t = needsHost(s);
  return t.charAt(0).toUpperCase() + t.slice(1);
};

/** The whole browser and the audio server, then the audio threads that used CPU in the window (the
 * browser's total counts every thread, its page and compositor too: the rows need not add up to it). */
export function cpuTable(v: CpuView): Node[] {
  const totals = h(
    'div',
    { class: 'totals' },
    h('span', null, 'Whole browser ', h('b', null, `${fmtPct(v.browser_cpu_pct)} %`)),
    h('span', null, 'Audio server ', h('b', null, `${fmtPct(v.audio_server_cpu_pct)} %`)),
  );
  const busy = v.threads.filter((t) => fmtPct(t.cpu_pct) !== fmtPct(0));
  if (busy.length === 0)
    return [totals, h('div', { class: 'muted' }, 'No audio thread used CPU in the last second.')];
  const rows = busy.map((t) =>
    h(
      'tr',
      null,
      h('td', null, t.thread),
      h('td', { class: 'muted' }, roleWords(t.role)),
      h('td', { class: 'num' }, fmtPct(t.cpu_pct)),
      h('td', { class: 'num' }, Math.round(t.wakeups_per_s)),
    ),
  );
  return [
    totals,
    h('div', { class: 'muted' }, 'Busiest audio threads:'),
    table([['thread'], ['in'], ['CPU %', 'num'], ['wakeups/s', 'num']], rows),
  ];
}

/** micoff-host's process role, readable (the audio server's processes by that name). */
const roleWords = (role: string): string =>
  AUDIO_SERVER_ROLES.has(role) ? 'audio server' : role.replaceAll('_', ' ');

/** A record stream's state in words ("corked" is the audio server's word for paused). */
export const streamState = (s: { corked: boolean; muted: boolean }): string =>
  s.corked ? 'paused' : s.muted ? 'muted' : 'live';

/** Who holds a microphone open, as the audio server lists it: the program, the microphone, its state. */
export function streamsTable(a: AudioSnapshot): Node[] {
  if (!a.connected) return [h('div', { class: 'muted' }, a.reason ?? 'Audio server not reachable.')];
  const server = h(
    'div',
    { class: 'muted' },
    `${a.server?.server_name ?? 'Audio server'} ${a.server?.server_version ?? ''}`.trim(),
  );
  const rec = a.streams.filter((s) => s.kind === 'record');
  if (rec.length === 0) return [server, h('div', null, 'No program has a microphone open.')];
  const rows = rec.map((s) =>
    h(
      'tr',
      null,
      h('td', null, programNameOf(s)),
      h('td', null, microphoneNameOf(s)),
      h('td', null, streamState(s)),
    ),
  );
  // The audio server's own names and numbers, for a bug report: folded away.
  const raw = rec.map((s) =>
    h(
      'tr',
      null,
      h('td', { class: 'num' }, s.index),
      h('td', { class: 'num' }, s.application_process_id ?? ''),
      h('td', null, s.device_name ?? String(s.device_index)),
      h('td', { class: 'num' }, (s.buffer_latency_us / 1000).toFixed(0)),
    ),
  );
  return [
    server,
    table([['program'], ['microphone'], ['state']], rows),
    h(
      'details',
      null,
      h('summary', { class: 'muted' }, "The audio server's names (for a bug report)"),
      table([['stream', 'num'], ['process id', 'num'], ['source name'], ['buffer, ms', 'num']], raw),
    ),
  ];
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
