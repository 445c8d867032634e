// Doctor findings (issue 5) as the popup lists them. The host's `doctor` result is `unknown` in
// protocol v1 (reserved); this reads it leniently so a newer host's extra fields never break the popup.

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
    const sev = r.severity === 'warn' ? 'warning' : r.severity;
    out.push({
      id: str(r.id) ?? `finding-${i}`,
      severity: SEVERITIES.includes(sev as Severity) ? (sev as Severity) : 'info',
      title,
      detail: str(r.detail),
      fix_command: str(r.fix_command) ?? str(r.fix),
    });
  }
  const rank = (s: Severity) => SEVERITIES.length - SEVERITIES.indexOf(s);
  return out.sort((a, b) => rank(a.severity) - rank(b.severity));
}
