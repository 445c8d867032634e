import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDoctorFindings } from './doctor.ts';
import { type DoctorReport, type DoctorReportFinding, isDoctorReport } from './protocol.ts';

/** A finding as the host sends it; `hint` only when given (older hosts lack it). */
function finding(f: Pick<DoctorReportFinding, 'id' | 'status' | 'title'> & Partial<DoctorReportFinding>) {
  return { category: 'c', current: '', why: 'w', fix: null, details: [], ...f } satisfies DoctorReportFinding;
}

/** A report the host client would accept (`isResultFor('doctor', ...)`). */
function report(findings: DoctorReportFinding[]): DoctorReport {
  const r: DoctorReport = {
    schema_version: 1,
    root: '/',
    kernel_release: '5.10.70',
    kernel_version: '5.10.70',
    summary: { ok: 0, worth_changing: 0, not_applicable: 0 },
    findings,
  };
  assert.ok(isDoctorReport(r), JSON.stringify(r));
  return r;
}

test('parseDoctorFindings: order and labels, unknown statuses kept, untitled dropped', () => {
  const cases: [DoctorReport, string[]][] = [
    [report([]), []],
    [
      report([
        finding({ id: 'a', status: 'ok', title: 'shm on' }),
        finding({ id: 'b', status: 'worth_changing', title: 'governor' }),
        finding({ id: 'c', status: 'not_applicable', title: 'hda' }),
        finding({ id: 'd', status: 'needs_reboot', title: 'from a newer host' }),
        finding({ id: 'e', status: 'ok', title: ' ' }),
        finding({ id: 'f', status: '', title: 'no status' }),
        finding({ id: 'g', status: 'failed', title: 'audio server' }),
      ]),
      [
        'worth changing:governor',
        'failed:audio server',
        'needs reboot:from a newer host',
        'ok:shm on',
        'not applicable:hda',
        'not applicable:no status',
      ],
    ],
  ];
  for (const [input, want] of cases) {
    assert.deepEqual(
      parseDoctorFindings(input).map((f) => `${f.label}:${f.title}`),
      want,
      JSON.stringify(input),
    );
  }
  const [other] = parseDoctorFindings(report([finding({ id: 'd', status: 'needs_reboot', title: 't' })]));
  assert.equal(other?.status, 'other');
});

test('parseDoctorFindings: micoff-doctor report, command and hint kept apart', () => {
  const r = report([
    finding({ id: 'shm', status: 'ok', title: 'shm', current: 'on', fix: null, hint: null }),
    finding({
      id: 'udelay',
      status: 'worth_changing',
      title: 'udelay',
      current: 'kernel 5.10.70 still has the udelay',
      fix: 'sudo micoff-host fix hda --apply',
      hint: 'or upgrade the kernel to 5.10.80 or later',
    }),
    finding({
      id: 'threadirqs',
      status: 'worth_changing',
      title: 'threadirqs',
      current: 'not set',
      fix: null,
      hint: 'add threadirqs to GRUB_CMDLINE_LINUX_DEFAULT',
    }),
    // A host older than `hint`.
    finding({
      id: 'smt',
      status: 'worth_changing',
      title: 'smt',
      current: 'on',
      fix: 'echo off | sudo tee x',
    }),
    finding({ id: 'hda', status: 'not_applicable', title: 'hda', current: 'no HDA', fix: null, hint: null }),
  ]);
  const rows: [string, string, string, string | null, string | null][] = parseDoctorFindings(r).map((f) => [
    f.id,
    f.status,
    f.label,
    f.command,
    f.hint,
  ]);
  assert.deepEqual(rows, [
    [
      'udelay',
      'worth_changing',
      'worth changing',
      'sudo micoff-host fix hda --apply',
      'or upgrade the kernel to 5.10.80 or later',
    ],
    ['threadirqs', 'worth_changing', 'worth changing', null, 'add threadirqs to GRUB_CMDLINE_LINUX_DEFAULT'],
    ['smt', 'worth_changing', 'worth changing', 'echo off | sudo tee x', null],
    ['shm', 'ok', 'ok', null, null],
    ['hda', 'not_applicable', 'not applicable', null, null],
  ]);
  // Only a one-line string is ever a command; blank strings are nothing.
  const [odd] = parseDoctorFindings(
    report([finding({ id: 'x', status: 'worth_changing', title: 't', current: ' ', fix: 'a\nb', hint: '' })]),
  );
  assert.deepEqual(odd, {
    id: 'x',
    status: 'worth_changing',
    label: 'worth changing',
    title: 't',
    detail: null,
    command: null,
    hint: null,
  });
});
