import assert from 'node:assert/strict';
import { test } from 'node:test';
import { disconnects } from './audio-connections.ts';

const a = { name: 'a' };
const b = { name: 'b' };

test('disconnect overloads remove exactly the connections they name', () => {
  const cases: [unknown[], unknown[], boolean][] = [
    [[], [a], true],
    [[0], [a], true], // output 0 is the default
    [[1], [a], false],
    [[1], [a, 1], true],
    [[a], [a, 1, 0], true],
    [[a], [b], false],
    [[a, 0], [a], true],
    [[a, 1], [a], false],
    [[a, 0, 1], [a, 0, 1], true],
    [[a, 0, 1], [a], false],
    [[a, 0, 0], [a], true],
  ];
  for (const [args, conn, want] of cases) {
    assert.equal(
      disconnects(args, conn),
      want,
      `disconnect(${JSON.stringify(args)}) vs ${JSON.stringify(conn)}`,
    );
  }
});
