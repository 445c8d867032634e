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
  const [gov] = parseDoctorFindings([{ id: 'gov', title: 't', fix_command: 'x' }]);
  assert.deepEqual(gov, { id: 'gov', severity: 'info', title: 't', detail: null, fix_command: 'x' });
});
