import assert from 'node:assert/strict';
import { test } from 'node:test';
import { concreteDeviceId, groupKey, reacquireConstraints } from './device-groups.ts';

const devices = [
  { kind: 'audioinput', deviceId: 'default', groupId: 'g1' },
  { kind: 'audioinput', deviceId: 'communications', groupId: 'g1' },
  { kind: 'audiooutput', deviceId: 'out1', groupId: 'g1' },
  { kind: 'audioinput', deviceId: 'mic1', groupId: 'g1' },
  { kind: 'audioinput', deviceId: 'mic2', groupId: 'g2' },
] as MediaDeviceInfo[];

test('concreteDeviceId pins the virtual default to the real input of the same group', () => {
  const cases: [MediaTrackSettings, string | null][] = [
    [{ deviceId: 'default', groupId: 'g1' }, 'mic1'],
    [{ deviceId: 'communications', groupId: 'g1' }, 'mic1'],
    [{ deviceId: 'default', groupId: 'g2' }, 'mic2'],
    [{ deviceId: 'default', groupId: 'gone' }, null],
    [{ deviceId: 'mic2', groupId: 'g2' }, null], // already concrete
    [{}, null],
  ];
  for (const [s, want] of cases) assert.equal(concreteDeviceId(s, devices), want, JSON.stringify(s));
});

test('groupKey and reacquireConstraints', () => {
  assert.equal(groupKey({ deviceId: 'mic1' }), 'mic1');
  assert.equal(groupKey({}), '');
  assert.deepEqual(reacquireConstraints(true, 'mic1'), { deviceId: { exact: 'mic1' } });
  assert.deepEqual(reacquireConstraints({ echoCancellation: false, deviceId: 'x' }, 'mic1'), {
    echoCancellation: false,
    deviceId: { exact: 'mic1' },
  });
  assert.deepEqual(reacquireConstraints(undefined, ''), {});
});
