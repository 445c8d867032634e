import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { alive, type Child, startChild, stopChild, waitFor } from './proc.ts';

test('stopChild of a child that exited long ago leaves a new process with its PID alone', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'micoff-proc-test-'));
  // A process that "got the PID" of a child that exited: a group leader, as Playwright starts browsers.
  const other = spawn('sleep', ['30'], { detached: true, stdio: 'ignore' });
  try {
    const pid = other.pid as number;
    const stale: Child = {
      name: 'exited long ago',
      proc: other,
      pid,
      logFile: join(dir, 'none.log'),
      exit: { code: 0, signal: null },
    };
    await stopChild(stale);
    await new Promise((r) => setTimeout(r, 100));
    assert.equal(alive(pid), true, 'the process now holding the PID was signalled');
  } finally {
    other.kill('SIGKILL');
    rmSync(dir, { recursive: true, force: true });
  }
});

test('stopChild ends a running child and what it started in its group', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'micoff-proc-test-'));
  try {
    // A shell that starts a grandchild in the background and waits: both in the child's group.
    const c = startChild(
      'shell',
      'sh',
      ['-c', 'sleep 30 & echo $! > grandchild; wait'],
      join(dir, 'sh.log'),
      {
        cwd: dir,
      },
    );
    const f = join(dir, 'grandchild');
    const grandchild = await waitFor('the grandchild pid', () =>
      existsSync(f) ? Number(readFileSync(f, 'utf8').trim()) || null : null,
    );
    await stopChild(c);
    assert.notEqual(c.exit, null);
    await waitFor('the grandchild to be gone', () => !alive(grandchild), { timeoutMs: 3000 });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
