// Doctor findings (issue 5) as the popup lists them. The host's `doctor` result is micoff-doctor's
// report (`DoctorReport` in protocol.ts: findings with `status` ok | worth_changing | not_applicable,
// `current`, `why`, `fix`); this reads it leniently so a newer host's extra fields never break the popup.

export type Severity = 'ok' | 'info' | 'warning' | 'error';

export interface DoctorFinding {
  id: string;
  severity: Severity;
  title: string;
  detail: string | null;
  /** A shell command that fixes it (shown with a copy button). */
  fix_command: string | null;
}

const SEVERITIES: readonly Severity[] = ['ok', 'info', 'warning', 'error'];
/** micoff-doctor's `status` -> the popup's severity. */
const STATUS_SEVERITY: Record<string, Severity> = {
  ok: 'ok',
  worth_changing: 'warning',
  not_applicable: 'info',
};

function str(v: unknown): string | null {
  return typeof v === 'string' && v !== '' ? v : null;
}

/** `{findings: [...]}` or a bare array -> findings, worst first; entries without a title are dropped. */
export function parseDoctorFindings(result: unknown): DoctorFinding[] {
  const list = Array.isArray(result)
    ? result
    : typeof result === 'object' &&
        result !== null &&
        Array.isArray((result as { findings?: unknown }).findings)
      ? (result as { findings: unknown[] }).findings
      : [];
  const out: DoctorFinding[] = [];
  for (const [i, raw] of list.entries()) {
    if (typeof raw !== 'object' || raw === null) continue;
    const r = raw as Record<string, unknown>;
    const title = str(r.title) ?? str(r.message) ?? str(r.summary);
    if (!title) continue;
    const sev = r.severity === 'warn' ? 'warning' : (STATUS_SEVERITY[String(r.status)] ?? r.severity);
    out.push({
      id: str(r.id) ?? `finding-${i}`,
      severity: SEVERITIES.includes(sev as Severity) ? (sev as Severity) : 'info',
      title,
      detail: str(r.detail) ?? str(r.current),
      fix_command: str(r.fix_command) ?? str(r.fix),
    });
  }
  const rank = (s: Severity) => SEVERITIES.length - SEVERITIES.indexOf(s);
  return out.sort((a, b) => rank(a.severity) - rank(b.severity));
}
