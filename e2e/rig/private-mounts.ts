// A browser (and the installer) with private system folders, seen only by the processes the test runs
// inside one private mount namespace: how a policy, `micoff-host install --system` or a dpkg install is
// tested for real without changing the machine. One holder process (`unshare --mount`) binds each test
// folder over its system folder (a missing one through a tmpfs overlay); others enter with `nsenter`.
// How it works: docs/test-rig.md#private-mounts-in-detail.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { logTail, type RunResult, run, startChild, stopChild, waitFor, which } from './proc.ts';

/** A system folder, and the test's folder that stands in for it. */
export interface PrivateFolder {
  system: string;
  test: string;
}

export interface MountNamespace {
  /** The process holding the namespace (its /proc/<pid>/ns/mnt is what `nsenter` enters). */
  pid: number;
  /** `executable args` inside the namespace, to completion (`run` of proc.ts). */
  run(
    executable: string,
    args: string[],
    opts?: { env?: NodeJS.ProcessEnv; timeoutMs?: number },
  ): Promise<RunResult>;
  /** Writes an executable script at `file` that runs `executable "$@"` inside the namespace, with the
   * same process id (sh and nsenter exec it): for a launch library's `executablePath`. */
  launcher(file: string, executable: string): string;
  /** `path` as the namespace sees it, reachable from outside (`/proc/<holder>/root<path>`): read or
   * write a file there without entering the namespace. */
  inside(path: string): string;
  /** The upper layer of the overlay over `system` (one of `overlays`): what the namespace wrote
   * there, reachable from outside. */
  upperOf(system: string): string;
  /** Ends the holder; what still runs inside keeps the namespace until it exits. */
  close(): Promise<void>;
}

export interface MountNamespaceOptions {
  /** System folders covered whole by an overlay whose upper layer is a tmpfs of the namespace: the
   * machine's files show through, what the namespace writes there stays in the namespace. */
  overlays?: string[];
}

const TOOLS = ['unshare', 'nsenter', 'mount'] as const;

/**
 * Why private mounts cannot be used here (not root, a tool missing), or null (for `need`,
 * e2e/rig/needs.ts: a skip locally, a failure under CI, which runs as root on Debian).
 */
export function privateMountsMissing(): string | null {
  const missing = TOOLS.filter((t) => !which(t));
  return process.getuid?.() !== 0
    ? 'it needs root for a private mount namespace (unshare --mount); run as root, as CI does'
    : missing.length
      ? `it needs ${missing.join(', ')} (util-linux, mount) for a private mount namespace`
      : null;
}

/** The nearest existing folder at or above `path`. */
function existingAncestor(path: string): string {
  let p = path;
  while (!existsSync(p)) p = dirname(p);
  return p;
}

/** Mount points strictly below `dir`, outermost first, none inside another of them
 * (/proc/self/mountinfo, octal escapes decoded). */
function mountsBelow(dir: string): string[] {
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  const all = readFileSync('/proc/self/mountinfo', 'utf8')
    .split('\n')
    .map((line) =>
      (line.split(' ')[4] ?? '').replace(/\\([0-7]{3})/g, (_, o) => String.fromCharCode(parseInt(o, 8))),
    )
    .filter((m) => m.startsWith(prefix))
    .sort((a, b) => a.length - b.length);
  return all.filter((m, i) => !all.slice(0, i).some((outer) => m.startsWith(`${outer}/`)));
}

/** `s` as one shell word. */
const q = (s: string) => `'${s.replaceAll("'", `'\\''`)}'`;

/**
 * The holder's script, and where each overlay's layer is (`${scratch}/<n>`, by the folder it covers).
 * Each of `overlays`, then each missing system folder's nearest existing parent (shallowest first),
 * gets an overlay (the folder's files below, a tmpfs of the namespace above) unless it lies in one
 * overlaid already, and whatever was mounted below it (a container's /etc/hosts) is bound back over
 * the overlay; then every test folder is bound over its system folder.
 */
function setupScript(
  folders: PrivateFolder[],
  overlays: string[],
  scratch: string,
): { script: string; layers: Map<string, string> } {
  const out = ['set -e', `mount -t tmpfs micoff-private ${q(scratch)}`];
  const layers = new Map<string, string>();
  const parents = folders
    .filter((f) => !existsSync(f.system))
    .map((f) => existingAncestor(f.system))
    .sort((a, b) => a.split('/').length - b.split('/').length);
  const byDepth = [...overlays].sort((a, b) => a.split('/').length - b.split('/').length);
  for (const lower of [...byDepth, ...parents]) {
    // A folder inside one overlaid already is there (the tmpfs layer) once its folder is made.
    if ([...layers.keys()].some((o) => lower === o || lower.startsWith(`${o}/`))) continue;
    if (lower === '/') throw new Error('private mount namespace: will not overlay / itself');
    const layer = `${scratch}/${layers.size}`;
    layers.set(lower, layer);
    out.push(`mkdir -p ${q(`${layer}/upper`)} ${q(`${layer}/work`)} ${q(`${layer}/keep`)}`);
    const below = mountsBelow(lower);
    for (const [i, m] of below.entries()) {
      // Kept reachable under the tmpfs before the overlay covers it: a file or a folder, as it is.
      const keep = q(`${layer}/keep/${i}`);
      out.push(
        `if [ -d ${q(m)} ]; then mkdir ${keep}; else : > ${keep}; fi`,
        `mount --rbind ${q(m)} ${keep}`,
      );
    }
    out.push(
      `mount -t overlay micoff-private -o ${q(`lowerdir=${lower},upperdir=${layer}/upper,workdir=${layer}/work`)} ${q(lower)}`,
    );
    for (const [i, m] of below.entries()) out.push(`mount --rbind ${q(`${layer}/keep/${i}`)} ${q(m)}`);
  }
  for (const f of folders) out.push(`mkdir -p ${q(f.system)}`, `mount --bind ${q(f.test)} ${q(f.system)}`);
  out.push('echo ready', 'exec sleep infinity');
  return { script: out.join('\n'), layers };
}

/** A private mount namespace in which each `folders[i].system` is `folders[i].test` (created in the
 * namespace when missing) and each of `opts.overlays` is private to it. `dir` is a folder of the test
 * (the holder's log, the tmpfs's mount point). */
export async function openMountNamespace(
  folders: PrivateFolder[],
  dir: string,
  opts: MountNamespaceOptions = {},
): Promise<MountNamespace> {
  const missing = privateMountsMissing();
  if (missing) throw new Error(`private mount namespace: ${missing}`);
  const [unshare, nsenter] = [which('unshare'), which('nsenter')] as [string, string];
  const scratch = join(dir, 'namespace-scratch');
  mkdirSync(scratch, { recursive: true });
  for (const f of folders) mkdirSync(f.test, { recursive: true });
  const { script, layers } = setupScript(folders, opts.overlays ?? [], scratch);
  const log = join(dir, 'namespace.log');
  const holder = startChild(
    'private mount namespace',
    unshare,
    ['--mount', '--propagation', 'private', '--', 'sh', '-c', script],
    log,
  );
  try {
    await waitFor(
      'the private mount namespace set up',
      () => existsSync(log) && /^ready$/m.test(logTail(log)),
      {
        timeoutMs: 10_000,
        check: () => {
          if (holder.exit || holder.exitError) {
            throw new Error(`private mount namespace: setup failed:\n${logTail(log)}`);
          }
        },
      },
    );
  } catch (e) {
    await stopChild(holder);
    throw e;
  }
  const enter = [`--mount=/proc/${holder.pid}/ns/mnt`, '--'];
  const inside = (path: string) => `/proc/${holder.pid}/root${path}`;
  return {
    pid: holder.pid,
    inside,
    upperOf(system) {
      const layer = opts.overlays?.includes(system) ? layers.get(system) : undefined;
      if (!layer) throw new Error(`private mount namespace: ${system} is not one of its overlays`);
      return inside(`${layer}/upper`);
    },
    run: (executable, argv, runOpts) => run(nsenter, [...enter, executable, ...argv], runOpts),
    launcher(file, executable) {
      writeFileSync(
        file,
        [
          '#!/bin/sh',
          `# ${executable} inside the test's private mount namespace (held by pid ${holder.pid}).`,
          `exec ${nsenter} ${enter.join(' ')} '${executable}' "$@"`,
          '',
        ].join('\n'),
        { mode: 0o755 },
      );
      return file;
    },
    close: () => stopChild(holder),
  };
}
