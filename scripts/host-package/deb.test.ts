import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { PACKAGED_HOST, PACKAGED_MANIFESTS } from '../../e2e/rig/deb.ts';
import { extensionIds } from '../build.mjs';
import { checkDeb, citedDocs, listing } from './check-deb.mjs';
import {
  arArchive,
  changelogDebianText,
  controlText,
  copyrightText,
  debFileName,
  INSTALLED_HOST,
  PROTOCOL_DOC,
  packDeb,
  rfc5322,
  SYSTEM_MANIFESTS,
  stageTree,
} from './deb.mjs';
import type { HostFiles } from './host-files.d.mts';
import { rebuildDeb } from './rebuild-deb.mjs';

const ROOT = join(import.meta.dirname, '../..');
const LICENSE = readFileSync(join(ROOT, 'LICENSE'), 'utf8');
const VERSION = '9.8.7';
const DATE = '2026-11-26';
const tmp = mkdtempSync(join(tmpdir(), 'micoff-deb-test-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

/**
 * What host-files.mjs hands the packager, made here: two man pages (the root page refers to the
 * other), the three completions and the two manifests as the installer writes them. `allowExtra`
 * adds a foreign id to the Chromium manifest.
 */
function fakeHostFiles(
  dir: string,
  { allowExtra = false, dropDoctorPage = false, cite = 'PROTOCOL.md', brokenCompletion = false } = {},
): HostFiles {
  mkdirSync(join(dir, 'man1'), { recursive: true });
  mkdirSync(join(dir, 'completions'), { recursive: true });
  mkdirSync(join(dir, 'manifests'), { recursive: true });
  const page = (name: string, body: string) => {
    writeFileSync(join(dir, 'man1', name), `.TH ${name} 1\n.SH NAME\n${body}\n`);
    return join(dir, 'man1', name);
  };
  // The root page cites a file of the doc folder, as micoff-host.1 cites the protocol's description.
  const man = [page('micoff-host.1', `micoff\\-host\\-doctor(1); /usr/share/doc/micoff\\-host/${cite}.`)];
  if (!dropDoctorPage) man.push(page('micoff-host-doctor.1', 'doctor'));
  // Each offers --browser after `micoff-host install` (as check-deb asks the shells; zsh's is not run).
  const scripts: Record<string, string> = {
    'micoff-host.bash': `_f() { COMPREPLY=(${brokenCompletion ? '--help' : '--browser'}); }\ncomplete -F _f micoff-host\n`,
    '_micoff-host': '#compdef micoff-host\n',
    'micoff-host.fish': "complete -c micoff-host -n '__fish_seen_subcommand_from install' -l browser\n",
  };
  const completion = (name: string) => {
    writeFileSync(join(dir, 'completions', name), scripts[name] ?? '');
    return join(dir, 'completions', name);
  };
  const { chromeId, firefoxId } = extensionIds();
  const manifest = (flavor: string, allowed: Record<string, string[]>) => {
    mkdirSync(join(dir, 'manifests', flavor), { recursive: true });
    const file = join(dir, 'manifests', flavor, 'org.micoff.host.json');
    writeFileSync(
      file,
      `${JSON.stringify({ name: 'org.micoff.host', description: 'd', path: INSTALLED_HOST, type: 'stdio', ...allowed }, null, 2)}\n`,
    );
    return file;
  };
  const origins = [`chrome-extension://${chromeId}/`, ...(allowExtra ? ['chrome-extension://other/'] : [])];
  return {
    man,
    completions: {
      bash: completion('micoff-host.bash'),
      zsh: completion('_micoff-host'),
      fish: completion('micoff-host.fish'),
    },
    manifests: {
      chromium: manifest('chromium', { allowed_origins: origins }),
      firefox: manifest('firefox', { allowed_extensions: [firefoxId] }),
    },
  };
}

/** A .deb of the fake files with /bin/true as the host, into `name`'s folder. */
function buildFake(name: string, opts: Parameters<typeof fakeHostFiles>[1] = {}): string {
  const dir = join(tmp, name);
  const files = fakeHostFiles(join(dir, 'files'), opts);
  const stage = join(dir, 'stage');
  const changelogMd = `# Changelog\n\n## [${VERSION}] - ${DATE}\n`;
  stageTree(stage, {
    hostBin: '/bin/true',
    files,
    licenseText: LICENSE,
    changelogMd,
    protocolMd: '# Protocol\n',
    version: VERSION,
    date: DATE,
  });
  mkdirSync(join(dir, 'out'), { recursive: true });
  return packDeb(stage, { version: VERSION, date: DATE, outDir: join(dir, 'out') });
}

test('a package of correct parts passes every check, and the same inputs give the same bytes', () => {
  const deb = buildFake('good');
  assert.equal(deb.endsWith(debFileName(VERSION)), true);
  assert.deepEqual(checkDeb(deb, VERSION), []);
  const again = buildFake('good-again');
  const sha = (p: string) => createHash('sha256').update(readFileSync(p)).digest('hex');
  assert.equal(sha(again), sha(deb));
});

test('the tree: /etc entries link to the package copy in /usr/share, Firefox gets a file, all root', () => {
  const deb = buildFake('tree');
  const entries = listing(deb);
  for (const { dir, link } of SYSTEM_MANIFESTS) {
    const entry = entries.find((e) => e.path === `/${dir}/org.micoff.host.json`);
    assert.ok(entry, `/${dir}/org.micoff.host.json in the package`);
    if (link) {
      assert.equal(entry.mode, 'lrwxrwxrwx');
      assert.match(entry.link ?? '', /^\/usr\/share\/micoff-host\/native-messaging-hosts\/chromium\//);
    } else {
      assert.equal(entry.mode, '-rw-r--r--');
    }
  }
  assert.equal(entries.find((e) => e.path === INSTALLED_HOST)?.mode, '-rwxr-xr-x');
  assert.ok(entries.every((e) => e.owner === 'root/root'));
  // Only /etc links and package-owned files: nothing under /etc is a regular file (no conffile).
  assert.deepEqual(
    entries.filter((e) => e.path.startsWith('/etc/') && e.mode.startsWith('-')),
    [],
  );
  // /etc/opt is base-files' (no package owns it): listed, dpkg would remove it with micoff-host.
  assert.equal(
    entries.find((e) => e.path === '/etc/opt/'),
    undefined,
  );
  assert.ok(entries.find((e) => e.path === '/etc/opt/chrome/'));
  const stageLink = join(tmp, 'tree/stage/etc/chromium/native-messaging-hosts/org.micoff.host.json');
  assert.ok(lstatSync(stageLink).isSymbolicLink());
  assert.equal(
    readlinkSync(stageLink),
    '/usr/share/micoff-host/native-messaging-hosts/chromium/org.micoff.host.json',
  );
});

test('a manifest that allows another extension is reported', () => {
  const problems = checkDeb(buildFake('extra-id', { allowExtra: true }), VERSION);
  assert.equal(problems.length, 2, problems.join('\n')); // Chromium and Chrome share the file
  assert.match(problems[0] ?? '', /allows .*other/);
});

test('a page that refers to a missing page is reported', () => {
  const problems = checkDeb(buildFake('no-doctor-page', { dropDoctorPage: true }), VERSION);
  assert.deepEqual(problems, ['micoff-host.1.gz refers to micoff-host-doctor.1.gz, which is missing']);
});

test('a page that cites a doc file the package lacks is reported; the protocol is shipped', () => {
  assert.deepEqual(checkDeb(buildFake('cites-missing', { cite: 'NOTES.md' }), VERSION), [
    'micoff-host.1.gz cites /usr/share/doc/micoff-host/NOTES.md, which is missing',
  ]);
  const entry = listing(buildFake('cites-protocol')).find((e) => e.path === `/${PROTOCOL_DOC}`);
  assert.equal(entry?.mode, '-rw-r--r--');
  assert.deepEqual(citedDocs('see /usr/share/doc/micoff\\-host/PROTOCOL.md; and native\\-host/PROTOCOL.md'), [
    '/usr/share/doc/micoff-host/PROTOCOL.md',
  ]);
});

test('a shipped bash completion that does not offer --browser after install is reported', () => {
  assert.deepEqual(checkDeb(buildFake('broken-completion', { brokenCompletion: true }), VERSION), [
    'bash completes `micoff-host install --b<TAB>` to ["--help"], not --browser',
  ]);
});

test('a package of another version is reported', () => {
  const problems = checkDeb(buildFake('other-version'), '1.2.3');
  assert.match(problems.join('\n'), /Version 9\.8\.7-1 is not 1\.2\.3's/);
});

test('the ar archive is what dpkg reads: global header, 60-byte member headers, even offsets', () => {
  const ar = arArchive(
    [
      ['debian-binary', Buffer.from('2.0\n')],
      ['odd', Buffer.from('abc')],
      ['last', Buffer.from('xy')],
    ],
    1234,
  );
  assert.equal(ar.subarray(0, 8).toString('latin1'), '!<arch>\n');
  const header = ar.subarray(8, 68).toString('latin1');
  assert.equal(header, `${'debian-binary'.padEnd(16)}${'1234'.padEnd(12)}0     0     100644  4         \`\n`);
  // 'odd' is 3 bytes, padded to 4, so 'last' starts at an even offset.
  const oddAt = 8 + 60 + 4;
  assert.equal(ar.subarray(oddAt + 60, oddAt + 64).toString('latin1'), 'abc\n');
  assert.equal(ar.subarray(oddAt + 64, oddAt + 68).toString('latin1'), 'last');
  assert.equal(ar.length, oddAt + 64 + 60 + 2);
});

test('control: the Debian version carries the revision, the Depends is what it is given', () => {
  const text = controlText({ version: VERSION, installedSizeKib: 42, depends: 'libc6 (>= 2.34)' });
  assert.match(text, /^Package: micoff-host\nVersion: 9\.8\.7-1\nArchitecture: amd64\n/);
  assert.match(text, /\nInstalled-Size: 42\nDepends: libc6 \(>= 2\.34\)\n/);
  const rebuilt = controlText({ version: VERSION, revision: '2', installedSizeKib: 42, depends: 'libc6' });
  assert.match(rebuilt, /\nVersion: 9\.8\.7-2\n/);
  assert.equal(debFileName(VERSION, '2'), 'micoff-host_9.8.7-2_amd64.deb');
  for (const line of text.split('\n')) assert.ok(line.length <= 80, line);
});

test('copyright is DEP-5 with the full MIT text of LICENSE', () => {
  const text = copyrightText(LICENSE);
  assert.match(
    text,
    /^Format: https:\/\/www\.debian\.org\/doc\/packaging-manuals\/copyright-format\/1\.0\/\n/,
  );
  assert.match(
    text,
    /\nFiles: \*\nCopyright: \d{4} the micoff authors\nLicense: MIT\n\nLicense: MIT\n Permission/,
  );
  assert.match(text, /\n \.\n THE SOFTWARE IS PROVIDED "AS IS"/);
  assert.throws(() => copyrightText('MIT License\n'), /Copyright \(c\)/);
});

test('changelog.Debian: the Debian form, dated by the release entry', () => {
  assert.equal(rfc5322('2026-11-26'), 'Thu, 26 Nov 2026 00:00:00 +0000');
  const text = changelogDebianText(VERSION, DATE);
  assert.match(text, /^micoff-host \(9\.8\.7-1\) unstable; urgency=medium\n\n {2}\* /);
  assert.match(text, /\n -- The micoff authors <[^>]+> {2}Thu, 26 Nov 2026 00:00:00 \+0000\n$/);
});

test('rebuilt at revision 2 without a page: the same package at 9.8.7-2, that page gone, nothing else changed', () => {
  const deb = buildFake('rebuild');
  const page = '/usr/share/man/man1/micoff-host-doctor.1.gz';
  const changelogMd = `# Changelog\n\n## [${VERSION}] - ${DATE}\n`;
  const newer = join(tmp, 'rebuild', 'newer');
  const rebuilt = rebuildDeb(deb, { revision: '2', drop: [page], outDir: newer, changelogMd });
  assert.equal(rebuilt, join(newer, debFileName(VERSION, '2')));
  const field = (d: string, name: string) =>
    execFileSync('dpkg-deb', ['-f', d, name], { encoding: 'utf8' }).trim();
  assert.equal(field(rebuilt, 'Version'), '9.8.7-2');
  assert.equal(field(rebuilt, 'Depends'), field(deb, 'Depends'));
  const paths = (d: string) => listing(d).map((e) => `${e.mode} ${e.owner} ${e.path} ${e.link ?? ''}`);
  assert.deepEqual(
    paths(rebuilt),
    paths(deb).filter((p) => !p.includes(` ${page} `)),
  );
  const outDir = join(tmp, 'rebuild', 'bad');
  assert.throws(
    () => rebuildDeb(deb, { revision: '3', drop: ['/nowhere'], outDir, changelogMd }),
    /has no \/nowhere to drop/,
  );
});

test("the e2e's paths of the host and the manifests are the package's", () => {
  assert.equal(PACKAGED_HOST, INSTALLED_HOST);
  assert.deepEqual(
    Object.values(PACKAGED_MANIFESTS),
    SYSTEM_MANIFESTS.map(({ dir }) => `/${dir}/org.micoff.host.json`),
  );
});
