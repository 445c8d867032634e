// Doctor findings (what on this machine makes audio cost more CPU) as the popup lists them. The host's
// `doctor` result is micoff-doctor's report (`DoctorReport` in protocol/doctor-report.ts: findings with
// `status` ok | worth_changing | not_applicable | failed, `current`, `why`, `fix` = a runnable command
// or null, `hint` = prose or null), already checked against that shape by the host client
// (`isResultFor`); a newer host's other statuses never break the popup.

import type { DoctorReport, DoctorReportFinding } from './protocol.ts';

/** The statuses protocol.ts names: its open `string & {}` member (a newer host's) left out. */
type KnownStatus<S = DoctorReportFinding['status']> = S extends unknown
  ? string extends S
    ? never
    : S
  : never;

/** A status protocol.ts names, or `other` for one it does not. */
export type DoctorStatus = KnownStatus | 'other';

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

/** Display order: failed and worth changing first, unknown statuses next, then ok, then not
 * applicable. */
const RANK: Readonly<Record<DoctorStatus, number>> = {
  failed: 0,
  worth_changing: 0,
  other: 1,
  ok: 2,
  not_applicable: 3,
};

function str(v: string | null | undefined): string | null {
  return typeof v === 'string' && v.trim() !== '' ? v : null;
}

/** One line of shell: a command the host marked runnable; anything multi-line is not copied. */
function command(v: string | null): string | null {
  const s = str(v);
  return s !== null && !/[\r\n]/.test(s) ? s.trim() : null;
}

/** The report's findings, worth changing first (host order within a status); findings without a title
 * are dropped. */
export function parseDoctorFindings(r: DoctorReport): DoctorFinding[] {
  return r.findings
    .flatMap((f, i): DoctorFinding[] => {
      const title = str(f.title);
      if (!title) return [];
      const rawStatus = str(f.status) ?? 'not_applicable';
      const status: DoctorStatus = Object.hasOwn(RANK, rawStatus) ? (rawStatus as DoctorStatus) : 'other';
      return [
        {
          id: str(f.id) ?? `finding-${i}`,
          status,
          label: rawStatus.replaceAll('_', ' '),
          title,
          detail: str(f.current),
          command: command(f.fix),
          hint: str(f.hint),
        },
      ];
    })
    .sort((a, b) => RANK[a.status] - RANK[b.status]);
}
