// Host -> extension: micoff-doctor's report (`doctor`).

/** micoff-doctor's report (`micoff-host doctor --json`). */
export interface DoctorReportFinding {
  /** Stable id (`hda_udelay`). */
  id: string;
  category: string;
  title: string;
  /** `failed`: the doctor could not check it (no audio server running or reachable). */
  status: 'ok' | 'worth_changing' | 'not_applicable' | 'failed' | (string & {});
  current: string;
  why: string;
  /** A shell command that changes it, runnable as it is (the popup offers it for copying). */
  fix: string | null;
  /** What to do, for a person (the edit to make, when it takes effect). Absent from hosts
   * older than the field. */
  hint?: string | null;
  details: string[];
}

export interface DoctorReport {
  schema_version: number;
  root: string;
  kernel_release: string;
  kernel_version: string | null;
  summary: { ok: number; worth_changing: number; not_applicable: number };
  findings: DoctorReportFinding[];
}
