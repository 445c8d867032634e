// Doctor findings (issue 5) as the popup lists them. The host's `doctor` result is micoff-doctor's
// report (`DoctorReport` in protocol.ts: findings with `status` ok | worth_changing | not_applicable,
// `current`, `why`, `fix` = a runnable command or null, `hint` = prose or null); this reads it
// leniently so a newer host's extra fields or statuses never break the popup.

export type DoctorStatus = 'ok' | 'worth_changing' | 'not_applicable' | 'other';

export interface DoctorFinding {
  id: string;
  status: DoctorStatus;
  /** The status as the CLI says it: "ok", "worth changing", "not applicable". */
  label: string;
  title: string;
  /** What the machine has now. */
  detail: string | null;
  /** A shell command runnable as it is: the only thing offered for copying. */
  command: string | null;
  /** What to do, for a person (an edit, when it takes effect): shown as text, never copied. */
  hint: string | null;
}

const KNOWN: readonly DoctorStatus[] = ['ok', 'worth_changing', 'not_applicable'];
/** Worth changing first, unknown statuses next, then ok, then not applicable. */
const ORDER: readonly DoctorStatus[] = ['worth_changing', 'other', 'ok', 'not_applicable'];

function str(v: unknown): string | null {
  return typeof v === 'string' && v.trim() !== '' ? v : null;
}

/** One line of shell: a command the host marked runnable; anything multi-line is not copied. */
function command(v: unknown): string | null {
  const s = str(v);
  return s !== null && !/[\r\n]/.test(s) ? s.trim() : null;
}

/** `{findings: [...]}` or a bare array -> findings, worth changing first (host order within a status);
 * entries without a title are dropped. */
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
    const title = str(r.title);
    if (!title) continue;
    const rawStatus = str(r.status) ?? 'not_applicable';
    const status = (KNOWN as readonly string[]).includes(rawStatus) ? (rawStatus as DoctorStatus) : 'other';
    out.push({
      id: str(r.id) ?? `finding-${i}`,
      status,
      label: rawStatus.replaceAll('_', ' '),
      title,
      detail: str(r.current),
      command: command(r.fix),
      hint: str(r.hint),
    });
  }
  return out.sort((a, b) => ORDER.indexOf(a.status) - ORDER.indexOf(b.status));
}
