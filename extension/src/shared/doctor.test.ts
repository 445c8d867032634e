import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDoctorFindings } from './doctor.ts';

test('parseDoctorFindings: shapes it tolerates', () => {
  const cases: [unknown, string[]][] = [
    [null, []],
    [{}, []],
    [{ findings: 'x' }, []],
    [[{ title: 'a' }], ['not applicable:a']],
    [
      {
        findings: [
          { id: 'a', status: 'ok', title: 'shm on' },
          { id: 'b', status: 'worth_changing', title: 'governor' },
          { id: 'c', status: 'not_applicable', title: 'hda' },
          { id: 'd', status: 'needs_reboot', title: 'from a newer host' },
          { status: 'ok' },
          'junk',
          null,
        ],
      },
      ['worth changing:governor', 'needs reboot:from a newer host', 'ok:shm on', 'not applicable:hda'],
    ],
  ];
  for (const [input, want] of cases) {
    assert.deepEqual(
      parseDoctorFindings(input).map((f) => `${f.label}:${f.title}`),
      want,
      JSON.stringify(input),
    );
  }
});

test('parseDoctorFindings: micoff-doctor report, command and hint kept apart', () => {
  const report = {
    schema_version: 1,
    findings: [
      { id: 'shm', status: 'ok', title: 'shm', current: 'on', why: 'w', fix: null, hint: null, details: [] },
      {
        id: 'udelay',
        status: 'worth_changing',
        title: 'udelay',
        current: 'kernel 5.10.70 still has the udelay',
        why: 'w',
        fix: 'sudo micoff-host fix hda --apply',
        hint: 'or upgrade the kernel to 5.10.80 or later',
        details: [],
      },
      {
        id: 'threadirqs',
        status: 'worth_changing',
        title: 'threadirqs',
        current: 'not set',
        why: 'w',
        fix: null,
        hint: 'add threadirqs to GRUB_CMDLINE_LINUX_DEFAULT',
        details: [],
      },
      // A host older than `hint`.
      {
        id: 'smt',
        status: 'worth_changing',
        title: 'smt',
        current: 'on',
        why: 'w',
        fix: 'echo off | sudo tee x',
      },
      {
        id: 'hda',
        status: 'not_applicable',
        title: 'hda',
        current: 'no HDA',
        why: 'w',
        fix: null,
        hint: null,
      },
    ],
  };
  const rows: [string, string, string, string | null, string | null][] = parseDoctorFindings(report).map(
    (f) => [f.id, f.status, f.label, f.command, f.hint],
  );
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
  const [odd] = parseDoctorFindings([
    { id: 'x', status: 'worth_changing', title: 't', current: ' ', fix: 'a\nb', hint: '' },
  ]);
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
