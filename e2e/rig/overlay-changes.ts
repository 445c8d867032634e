// What a private mount namespace changed in the system folders it overlays (private-mounts.ts
// `overlays`). overlayfs writes every change into the upper layer: a new or changed file is there
// whole (copied up), a removed one as a whiteout (a character device 0:0), a folder removed and made
// again as an opaque folder (which hides the machine's entries in it). So the upper layers hold every
// change, and an entry there that equals the machine's own (a file copied up and written back as it
// was, a folder copied up to hold a new file) is no change. deb-package.spec.ts compares them before
// a package's install and after its remove and purge: nothing may differ but dpkg's own bookkeeping.
import { createHash } from 'node:crypto';
import { lstatSync, readdirSync, readFileSync, readlinkSync } from 'node:fs';
import { join } from 'node:path';

export type Kind = 'file' | 'link' | 'dir' | 'whiteout' | 'other';

/** An entry as a comparison needs it: what it is, its permission bits, its owner, and the file's
 * sha256 or the link's target. A folder's size and times are the file system's, not content. */
export interface Entry {
  kind: Kind;
  mode: number;
  owner: string;
  sha256?: string;
  target?: string;
}

/** An overlaid system folder: its path, its upper layer, and the namespace's (merged) view of it,
 * the last two as paths reachable from here (`MountNamespace.upperOf`, `inside`). */
export interface Overlay {
  system: string;
  upper: string;
  merged: string;
}

/** The entry at `path` (not following a link), or null when there is none. */
export function entryAt(path: string): Entry | null {
  let st: ReturnType<typeof lstatSync>;
  try {
    st = lstatSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw e;
  }
  const base = { mode: st.mode & 0o7777, owner: `${st.uid}:${st.gid}` };
  if (st.isFile())
    return { kind: 'file', ...base, sha256: createHash('sha256').update(readFileSync(path)).digest('hex') };
  if (st.isSymbolicLink()) return { kind: 'link', ...base, target: readlinkSync(path) };
  if (st.isDirectory()) return { kind: 'dir', ...base };
  if (st.isCharacterDevice() && st.rdev === 0) return { kind: 'whiteout', ...base };
  return { kind: 'other', ...base };
}

/** Every entry under `root` (not `root` itself), keyed by `prefix` + its path below `root`. */
export function treeEntries(root: string, prefix: string): Map<string, Entry> {
  const out = new Map<string, Entry>();
  const visit = (dir: string, shown: string) => {
    for (const name of readdirSync(dir).sort()) {
      const entry = entryAt(join(dir, name));
      if (!entry) continue;
      out.set(`${shown}/${name}`, entry);
      if (entry.kind === 'dir') visit(join(dir, name), `${shown}/${name}`);
    }
  };
  visit(root, prefix);
  return out;
}

/** Every entry of the overlays' upper layers, by its path on the system (`/usr/bin/micoff-host`). */
export function upperEntries(overlays: Overlay[]): Map<string, Entry> {
  const out = new Map<string, Entry>();
  for (const o of overlays) for (const [path, e] of treeEntries(o.upper, o.system)) out.set(path, e);
  return out;
}

/** Where the comparison looks: the machine's own entries (the lower layers), and the names the
 * namespace shows in a folder (its merged view). */
export interface Views {
  machine(path: string): Entry | null;
  machineNames(path: string): string[];
  mergedNames(path: string): string[];
}

/** The views of `overlays` from here: the machine's folders as they are, the namespace's through
 * each overlay's merged path. */
export function overlayViews(overlays: Overlay[]): Views {
  const names = (path: string) => {
    try {
      return readdirSync(path);
    } catch {
      return [];
    }
  };
  const merged = (path: string) => {
    const o = overlays.find((x) => path === x.system || path.startsWith(`${x.system}/`));
    return o ? `${o.merged}${path.slice(o.system.length)}` : path;
  };
  return { machine: entryAt, machineNames: names, mergedNames: (path) => names(merged(path)) };
}

export function entryText(e: Entry | null | undefined): string {
  if (!e) return 'nothing';
  if (e.kind === 'whiteout') return 'removed';
  const mode = e.mode.toString(8).padStart(4, '0');
  const what = e.sha256 ? ` sha256 ${e.sha256.slice(0, 16)}` : e.target ? ` -> ${e.target}` : '';
  return `${e.kind} ${mode} ${e.owner}${what}`;
}

export function same(a: Entry | null | undefined, b: Entry | null | undefined): boolean {
  if (!a || !b) return a === b;
  return (
    a.kind === b.kind &&
    a.mode === b.mode &&
    a.owner === b.owner &&
    a.sha256 === b.sha256 &&
    a.target === b.target
  );
}

/** Why a path may differ without being a change of the package's (dpkg's database, a trigger's
 * cache), or null. */
export type Allowed = (path: string) => string | null;

/**
 * What differs between two states of the upper layers, `before` and `after` (upperEntries), one line
 * per path: `added`, `changed` (was, now), `removed` (a whiteout: the machine's entry gone), `gone`
 * (an entry of `before` no longer there), `hidden` (a machine entry an opaque folder no longer
 * shows). An entry as it was in `before` is no change, nor one `before` did not have that equals
 * the machine's own (it showed through then), nor a path `allowed` names.
 */
export function changes(
  before: Map<string, Entry>,
  after: Map<string, Entry>,
  views: Views,
  allowed: Allowed,
): string[] {
  const out: string[] = [];
  const note = (path: string, line: string) => {
    if (!allowed(path)) out.push(line);
  };
  for (const [path, now] of after) {
    const machine = views.machine(path);
    // A folder the namespace removed and made again is opaque: the machine's entries in it are
    // hidden, whatever the folder's own mode says.
    if (now.kind === 'dir' && machine?.kind === 'dir') {
      const shown = new Set(views.mergedNames(path));
      for (const name of views.machineNames(path)) {
        const child = `${path}/${name}`;
        if (!shown.has(name) && after.get(child)?.kind !== 'whiteout')
          note(child, `hidden ${child}: the machine's entry no longer shows (an opaque folder above it)`);
      }
    }
    const was = before.get(path);
    if (same(now, was)) continue;
    // Not in `before`: the machine's entry showed through then, so the machine's is the one to equal.
    if (!was && now.kind !== 'whiteout' && same(now, machine)) continue;
    if (now.kind === 'whiteout') note(path, `removed ${path} (the machine's ${entryText(machine)})`);
    else if (!was && !machine) note(path, `added ${path} (${entryText(now)})`);
    else note(path, `changed ${path}: was ${entryText(was ?? machine)}, now ${entryText(now)}`);
  }
  for (const [path, was] of before) {
    if (after.has(path)) continue;
    const machine = views.machine(path);
    if (!same(was, machine)) note(path, `gone ${path}: was ${entryText(was)}, now ${entryText(machine)}`);
  }
  return out.sort();
}
