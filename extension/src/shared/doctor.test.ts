import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseDoctorFindings } from './doctor.ts';

test('parseDoctorFindings', () => {
  const cases: [unknown, string[]][] = [
    [null, []],
    [{}, []],
    [[{ title: 'a' }], ['info:a']],
    [
      {
        findings: [
          { id: 'gov', severity: 'warn', title: 'governor powersave', fix: 'micoff-host fix governor' },
          { severity: 'ok', title: 'shm on' },
          { severity: 'error', message: 'hda position_fix' },
          { severity: 'error' },
          'junk',
        ],
      },
      ['error:hda position_fix', 'warning:governor powersave', 'ok:shm on'],
    ],
  ];
  for (const [input, want] of cases) {
    assert.deepEqual(
      parseDoctorFindings(input).map((f) => `${f.severity}:${f.title}`),
      want,
      JSON.stringify(input),
    );
  }
  // micoff-doctor's report shape.
  const report = {
    schema_version: 1,
    findings: [
      { id: 'shm', status: 'ok', title: 'shm', current: 'on', why: 'w', fix: null, details: [] },
      {
        id: 'lat',
        status: 'worth_changing',
        title: 'latency',
        current: '10 ms',
        why: 'w',
        fix: 'PULSE_LATENCY_MSEC=60',
      },
      { id: 'hda', status: 'not_applicable', title: 'hda', current: 'no HDA', why: 'w', fix: null },
    ],
  };
  assert.deepEqual(
    parseDoctorFindings(report).map((f) => `${f.severity}:${f.id}:${f.detail}:${f.fix_command}`),
    ['warning:lat:10 ms:PULSE_LATENCY_MSEC=60', 'info:hda:no HDA:null', 'ok:shm:on:null'],
  );
  const [gov] = parseDoctorFindings([{ id: 'gov', title: 't', fix_command: 'x' }]);
  assert.deepEqual(gov, { id: 'gov', severity: 'info', title: 't', detail: null, fix_command: 'x' });
});
