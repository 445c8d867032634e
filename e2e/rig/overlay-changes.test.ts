import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { type Allowed, changes, type Entry, entryAt, treeEntries, type Views } from './overlay-changes.ts';

const file = (sha256: string, mode = 0o644): Entry => ({ kind: 'file', mode, owner: '0:0', sha256 });
const dir = (mode = 0o755): Entry => ({ kind: 'dir', mode, owner: '0:0' });
const whiteout: Entry = { kind: 'whiteout', mode: 0, owner: '0:0' };

/** The machine's entries and folder listings; the namespace shows `hidden` folders as empty. */
function views(machine: Record<string, Entry>, hidden: string[] = []): Views {
  const names = (path: string) =>
    Object.keys(machine)
      .filter((p) => p.startsWith(`${path}/`) && !p.slice(path.length + 1).includes('/'))
      .map((p) => p.slice(path.length + 1));
  return {
    machine: (path) => machine[path] ?? null,
    machineNames: names,
    mergedNames: (path) => (hidden.includes(path) ? [] : names(path)),
  };
}

const none: Allowed = () => null;
const upper = (entries: Record<string, Entry>) => new Map(Object.entries(entries));

test('copied up and left as the machine has it, or as it was before: no change', () => {
  const machine = { '/usr': dir(), '/usr/bin': dir(), '/usr/bin/sh': file('aa') };
  const before = upper({ '/etc/admin.json': file('ad') });
  const after = upper({ '/usr/bin': dir(), '/usr/bin/sh': file('aa'), '/etc/admin.json': file('ad') });
  assert.deepEqual(changes(before, after, views(machine), none), []);
});

test('a file left behind, one changed, one removed, one of before gone: each named', () => {
  const machine = { '/etc': dir(), '/etc/hosts': file('h1'), '/etc/passwd': file('p1') };
  const before = upper({ '/etc/admin.json': file('ad') });
  const after = upper({
    '/etc/micoff-stray': file('5f'),
    '/etc/hosts': file('h2'),
    '/etc/passwd': whiteout,
  });
  assert.deepEqual(changes(before, after, views(machine), none), [
    'added /etc/micoff-stray (file 0644 0:0 sha256 5f)',
    'changed /etc/hosts: was file 0644 0:0 sha256 h1, now file 0644 0:0 sha256 h2',
    'gone /etc/admin.json: was file 0644 0:0 sha256 ad, now nothing',
    "removed /etc/passwd (the machine's file 0644 0:0 sha256 p1)",
  ]);
});

test("a folder's mode or owner is a change; one removed and made again hides the machine's entries", () => {
  const machine = { '/etc': dir(), '/etc/opt': dir(), '/etc/opt/x': file('x1'), '/usr': dir() };
  const after = upper({ '/etc/opt': dir(), '/usr': { ...dir(), owner: '1000:1000' } });
  assert.deepEqual(changes(new Map(), after, views(machine, ['/etc/opt']), none), [
    'changed /usr: was dir 0755 0:0, now dir 0755 1000:1000',
    "hidden /etc/opt/x: the machine's entry no longer shows (an opaque folder above it)",
  ]);
  // A whiteout of that entry is said as such, not as hidden.
  const removed = upper({ '/etc/opt': dir(), '/etc/opt/x': whiteout });
  assert.deepEqual(changes(new Map(), removed, views(machine, ['/etc/opt']), none), [
    "removed /etc/opt/x (the machine's file 0644 0:0 sha256 x1)",
  ]);
});

test('a removed folder made again between before and after: the one change, said as such', () => {
  const machine = { '/etc': dir(), '/etc/opt': dir() };
  const before = upper({ '/etc/opt': whiteout });
  const after = upper({ '/etc/opt': dir() });
  assert.deepEqual(changes(before, after, views(machine), none), [
    'changed /etc/opt: was removed, now dir 0755 0:0',
  ]);
});

test('what `allowed` names is not reported', () => {
  const after = upper({ '/var/log/dpkg.log': file('l1'), '/var/lib/dpkg/status-old': file('s0') });
  const allowed: Allowed = (p) => (p.startsWith('/var/log/') ? "dpkg's log" : null);
  assert.deepEqual(changes(new Map(), after, views({}), allowed), [
    'added /var/lib/dpkg/status-old (file 0644 0:0 sha256 s0)',
  ]);
});

test('entries of a tree: files with their sha256, links with their target, folders, by prefix', () => {
  const root = mkdtempSync(join(tmpdir(), 'micoff-overlay-changes-'));
  try {
    mkdirSync(join(root, 'bin'), { mode: 0o755 });
    writeFileSync(join(root, 'bin', 'tool'), 'x', { mode: 0o755 });
    symlinkSync('/usr/share/x.json', join(root, 'bin', 'link'));
    const entries = treeEntries(root, '/usr');
    assert.deepEqual([...entries.keys()], ['/usr/bin', '/usr/bin/link', '/usr/bin/tool']);
    assert.equal(entries.get('/usr/bin')?.kind, 'dir');
    assert.equal(entries.get('/usr/bin/link')?.target, '/usr/share/x.json');
    const tool = entries.get('/usr/bin/tool');
    assert.equal(tool?.mode, 0o755);
    assert.equal(tool?.sha256, '2d711642b726b04401627ca9fbac32f5c8530fb1903cc4db02258717921a4881');
    assert.equal(entryAt(join(root, 'missing')), null);
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
});
