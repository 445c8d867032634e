// Child processes the rig starts: each one in its own process group with its output in a log file,
// stopped by its PID (group) and never by name, so parallel rigs and a desktop session stay untouched.
import { type ChildProcess, execFile, spawn } from 'node:child_process';
import { closeSync, existsSync, openSync, readFileSync } from 'node:fs';

export interface Child {
  name: string;
  proc: ChildProcess;
  pid: number;
  logFile: string;
  /** Set once the process exited (code or signal). */
  exit: { code: number | null; signal: NodeJS.Signals | null } | null;
  /** Set when the spawn itself failed (ENOENT etc.). */
  exitError?: Error;
}

export interface StartOptions {
  env?: NodeJS.ProcessEnv;
  cwd?: string;
  /** Default: stdin ignored. A 'pipe' stdin lets the caller feed it (the tone). */
  stdin?: 'ignore' | 'pipe';
  /** Default: into the log. 'ignore' for a child whose stdout is data (parec). */
  stdout?: 'log' | 'ignore';
}

const SETPRIV = which('setpriv');

/** Children still running: killed (by process group) if this process exits without stopping them. */
const live = new Set<Child>();
process.once('exit', () => {
  for (const c of live) killGroup(c, 'SIGKILL');
});

/** Starts `cmd` in a new process group, stdout+stderr appended to `logFile`. */
export function startChild(
  name: string,
  cmd: string,
  args: string[],
  logFile: string,
  opts: StartOptions = {},
): Child {
  const fd = openSync(logFile, 'a');
  let proc: ChildProcess;
  // Through `setpriv --pdeathsig KILL` where available: the child dies with the process that started it,
  // even when that one is killed hard (a Playwright worker at its timeout, ^C twice), instead of an
  // orphaned audio server living on.
  const [file, argv] = SETPRIV ? [SETPRIV, ['--pdeathsig', 'KILL', '--', cmd, ...args]] : [cmd, args];
  try {
    proc = spawn(file, argv, {
      env: opts.env ?? process.env,
      cwd: opts.cwd,
      detached: true, // own process group: stop() can signal the group, only ours
      stdio: [opts.stdin ?? 'ignore', opts.stdout === 'ignore' ? 'ignore' : fd, fd],
    });
  } finally {
    closeSync(fd);
  }
  if (proc.pid === undefined) throw new Error(`${name}: could not start \`${cmd}\` (not installed?)`);
  const child: Child = { name, proc, pid: proc.pid, logFile, exit: null };
  live.add(child);
  proc.on('exit', (code, signal) => {
    child.exit = { code, signal };
    live.delete(child);
  });
  proc.on('error', (e) => {
    child.exit ??= { code: -1, signal: null };
    child.exitError = e;
  });
  return child;
}

export function logTail(file: string, lines = 30): string {
  if (!existsSync(file)) return '(no log)';
  const text = readFileSync(file, 'utf8').trimEnd();
  const all = text.split('\n');
  return all.slice(-lines).join('\n') || '(empty log)';
}

export function describeExit(c: Child): string {
  if (c.exitError) return `failed to start: ${c.exitError.message}`;
  if (!c.exit) return 'running';
  return c.exit.signal ? `killed by ${c.exit.signal}` : `exited with code ${c.exit.code}`;
}

/** An error that names the part that failed and carries its log tail. */
export class RigError extends Error {
  constructor(part: string, what: string, logFile?: string) {
    super(
      `rig: ${part}: ${what}${logFile ? `\n--- ${logFile} (last lines) ---\n${logTail(logFile)}\n---` : ''}`,
    );
    this.name = 'RigError';
  }
}

export function assertAlive(c: Child): void {
  if (c.exit || c.exitError) throw new RigError(c.name, describeExit(c), c.logFile);
}

/** Is there a process with this PID (ours to signal)? */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** SIGTERM to the child's process group, then SIGKILL after `graceMs` (0: SIGKILL at once, as a crash
 * or the OOM killer ends it); resolves when it is gone. */
export async function stopChild(c: Child, graceMs = 3000): Promise<void> {
  if (c.exit) {
    killGroup(c, 'SIGKILL'); // leftovers in its group (e.g. the shell's children)
    return;
  }
  const exited = new Promise<void>((resolve) => {
    if (c.exit) resolve();
    c.proc.once('exit', () => resolve());
  });
  if (graceMs <= 0) {
    killGroup(c, 'SIGKILL');
    await exited;
    return;
  }
  killGroup(c, 'SIGTERM');
  const timer = new Promise<'timeout'>((r) => setTimeout(() => r('timeout'), graceMs).unref());
  if ((await Promise.race([exited, timer])) === 'timeout') {
    killGroup(c, 'SIGKILL');
    await exited;
  }
  killGroup(c, 'SIGKILL');
}

/**
 * Signals the child's process group. Once the child has exited (and Node reaped it) its PID is free
 * for any new process, and PIDs come round fast here (pid_max 32768, builds beside the tests): a
 * signal to that PID, or to a group of that number led by the new process (Playwright starts each
 * browser as a group leader), would land on whatever got the number. Leftovers of the child's group
 * keep the number reserved (Linux frees it only when no process uses it as PID, group or session), so
 * the group is still the child's exactly when no process has the PID; otherwise nothing is sent.
 */
function killGroup(c: Child, sig: NodeJS.Signals): void {
  if (c.exit) {
    if (alive(c.pid)) return; // the PID is someone else's now
    try {
      process.kill(-c.pid, sig);
    } catch {
      /* no leftovers */
    }
    return;
  }
  try {
    process.kill(-c.pid, sig);
  } catch {
    // group gone: the process alone (it left its group; not reaped yet, so the PID is still ours)
    try {
      process.kill(c.pid, sig);
    } catch {
      /* already gone */
    }
  }
}

export interface WaitOptions {
  timeoutMs?: number;
  intervalMs?: number;
  /** Called on every round; throw to abort early (e.g. a child died). */
  check?: () => void;
}

/**
 * Polls `cond` until it returns a truthy value (which is returned) or the deadline passes. The error
 * says what was awaited and the last value / error seen.
 */
export async function waitFor<T>(
  what: string,
  cond: () => T | Promise<T>,
  opts: WaitOptions = {},
): Promise<NonNullable<T>> {
  const deadline = Date.now() + (opts.timeoutMs ?? 10_000);
  const interval = opts.intervalMs ?? 50;
  let last: unknown;
  for (;;) {
    opts.check?.();
    try {
      const v = await cond();
      if (v) return v as NonNullable<T>;
      last = v;
    } catch (e) {
      last = e instanceof Error ? e.message : e;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${opts.timeoutMs ?? 10_000} ms waiting for ${what} (last: ${JSON.stringify(last)})`,
      );
    }
    await new Promise((r) => setTimeout(r, interval));
  }
}

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

/** Runs a short command to completion (never throws on a non-zero exit). */
export function run(
  cmd: string,
  args: string[],
  opts: { env?: NodeJS.ProcessEnv; timeoutMs?: number; cwd?: string } = {},
): Promise<RunResult> {
  return new Promise((resolve) => {
    execFile(
      cmd,
      args,
      { env: opts.env ?? process.env, timeout: opts.timeoutMs ?? 10_000, cwd: opts.cwd, maxBuffer: 64 << 20 },
      (err, stdout, stderr) => {
        const code = err ? (typeof err.code === 'number' ? err.code : -1) : 0;
        resolve({
          code,
          stdout: String(stdout),
          stderr: String(stderr) || (err && code === -1 ? err.message : ''),
        });
      },
    );
  });
}

/** `command -v` for one name. */
export function which(name: string): string | null {
  for (const dir of (process.env.PATH ?? '').split(':')) {
    if (dir && existsSync(`${dir}/${name}`)) return `${dir}/${name}`;
  }
  return null;
}
