// The Debian package of micoff-host: dist/micoff-host_<version>-<revision>_amd64.deb, a tree staged
// here and packed by `dpkg-deb --root-owner-group` (no cargo-deb, no debian/ source folder). Layout,
// the conffiles decision and what remove/purge do: docs/design/packaging.md "The Debian package".
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  chmodSync,
  copyFileSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, dirname, join, relative } from 'node:path';
import { epochOf, gzip9n } from './reproducible.mjs';

export const DEB_PACKAGE = 'micoff-host';
/** The packaging's own revision: raised when the package changes and micoff does not. */
export const DEB_REVISION = '1';
export const DEB_ARCH = 'amd64';
/** The Maintainer field: who answers for the package (an address lintian can parse). */
export const MAINTAINER = 'The micoff authors <micoff@micoff.org>';
/** Where the package puts the host; every system manifest names it. */
export const INSTALLED_HOST = '/usr/bin/micoff-host';
/** The package's own copies of the manifests; the /etc entries are links to them. */
const MANIFEST_HOME = 'usr/share/micoff-host/native-messaging-hosts';

/**
 * The folders where each browser reads system-wide native messaging manifests (the ones `micoff-host
 * install --system` writes; checked against it at package time, `checkAgainstInstaller`). Under
 * /etc the entry is a symbolic link to the package's copy in /usr/share: a manifest is not
 * configuration (its content follows from the binary: the host's path and the extension ids it
 * answers), so it is not a conffile, and a link is not one either (Debian Policy 10.7.2 holds for
 * regular files in /etc).
 */
export const SYSTEM_MANIFESTS = [
  { browser: 'chromium', flavor: 'chromium', dir: 'etc/chromium/native-messaging-hosts', link: true },
  { browser: 'chrome', flavor: 'chromium', dir: 'etc/opt/chrome/native-messaging-hosts', link: true },
  { browser: 'firefox', flavor: 'firefox', dir: 'usr/lib/mozilla/native-messaging-hosts', link: false },
];

/** Where each shell looks for completions (Debian's bash-completion, zsh and fish packages). */
export const COMPLETION_PATHS = {
  bash: 'usr/share/bash-completion/completions/micoff-host',
  zsh: 'usr/share/zsh/vendor-completions/_micoff-host',
  fish: 'usr/share/fish/vendor_completions.d/micoff-host.fish',
};

const DOC = `usr/share/doc/${DEB_PACKAGE}`;
/** The package's doc folder, as an absolute path (check-deb.mjs: what the man pages may cite). */
export const DOC_DIR = `/${DOC}`;
/** The protocol's description in the doc folder; the host's `--help` and man pages cite it
 * (micoff-native `PROTOCOL_DOC`), check-deb.mjs checks every cited doc file is in the package. */
export const PROTOCOL_DOC = `${DOC}/PROTOCOL.md`;

/**
 * The lintian tags that do not apply to this package, each with its reason (lintian shows it).
 * Both assume a package of Debian's own archive.
 */
export const LINTIAN_OVERRIDES = `# Google Chrome (an add-on package installed in /opt) reads system-wide native messaging
# manifests only from /etc/opt/chrome/native-messaging-hosts/. The FHS reserves /etc/opt for the
# configuration of /opt software, which this link (to /usr/share/micoff-host/) is for.
${DEB_PACKAGE}: dir-or-file-in-etc-opt [etc/opt/*]
# /etc/opt is base-files' (its postinst makes it on every Debian and Ubuntu system, no package lists
# it): listed here, dpkg would remove it with this package.
${DEB_PACKAGE}: missing-intermediate-directory [etc/opt/]
# micoff builds this package itself; it is not uploaded to Debian, so there is no ITP bug to close.
${DEB_PACKAGE}: initial-upload-closes-no-bugs [usr/share/doc/${DEB_PACKAGE}/changelog.Debian.gz:1]
`;

/** `<version>-<revision>`; another revision than DEB_REVISION only for a rebuilt package (the e2e's
 * upgrade, e2e/rig/deb.ts). */
export function debVersion(version, revision = DEB_REVISION) {
  return `${version}-${revision}`;
}

export function debFileName(version, revision = DEB_REVISION) {
  return `${DEB_PACKAGE}_${debVersion(version, revision)}_${DEB_ARCH}.deb`;
}

/** The copyright year and holder from LICENSE's `Copyright (c) <year> <holder>` line. */
export function licenseHolder(licenseText) {
  const m = /^Copyright \(c\) (\d{4}(?:-\d{4})?) (.+)$/m.exec(licenseText);
  if (!m) throw new Error('LICENSE has no `Copyright (c) <year> <holder>` line');
  return { years: m[1], holder: m[2] };
}

/** /usr/share/doc/micoff-host/copyright, machine-readable (DEP-5), the license text from LICENSE. */
export function copyrightText(licenseText) {
  const { years, holder } = licenseHolder(licenseText);
  // The license body: everything after the copyright line, one space indented, blank lines as " .".
  const body = licenseText
    .slice(licenseText.indexOf('\n', licenseText.indexOf('Copyright (c)')) + 1)
    .trim()
    .split('\n')
    .map((l) => (l.trim() === '' ? ' .' : ` ${l}`))
    .join('\n');
  return [
    'Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/',
    'Upstream-Name: micoff',
    '',
    'Files: *',
    `Copyright: ${years} ${holder}`,
    'License: MIT',
    '',
    'License: MIT',
    body,
    '',
  ].join('\n');
}

const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

/** RFC 5322 date of 00:00 UTC on `date` (YYYY-MM-DD), as Debian changelogs write it. */
export function rfc5322(date) {
  const d = new Date(`${date}T00:00:00Z`);
  const dd = String(d.getUTCDate()).padStart(2, '0');
  return `${DAYS[d.getUTCDay()]}, ${dd} ${MONTHS[d.getUTCMonth()]} ${d.getUTCFullYear()} 00:00:00 +0000`;
}

/** The Debian changelog: one entry for this packaging of `version`; micoff's own is changelog.gz. */
export function changelogDebianText(version, date) {
  return [
    `${DEB_PACKAGE} (${debVersion(version)}) unstable; urgency=medium`,
    '',
    `  * micoff-host ${version}, packaged by npm run package.`,
    `    What changed in micoff: /${DOC}/changelog.gz.`,
    '',
    ` -- ${MAINTAINER}  ${rfc5322(date)}`,
    '',
  ].join('\n');
}

export function controlText({ version, revision = DEB_REVISION, installedSizeKib, depends }) {
  return `Package: ${DEB_PACKAGE}
Version: ${debVersion(version, revision)}
Architecture: ${DEB_ARCH}
Maintainer: ${MAINTAINER}
Installed-Size: ${installedSizeKib}
Depends: ${depends}
Section: sound
Priority: optional
Description: native messaging host and audio tools of micoff
 micoff makes an idle, muted browser meeting on Linux cost as little as
 possible: its browser extension releases the microphone while nothing can
 hear it. micoff-host is the extension's native messaging host: it measures
 the per-thread CPU of the browser's audio path and of the audio server
 (PulseAudio or PipeWire) and reads the server's streams.
 .
 It also has command-line tools: sample and top (per-thread CPU), doctor and
 fix (the audio path's settings), bench (what a low-latency client costs)
 and latency (the browsers' capture latency).
 .
 This package sets the host up for every user of Chromium, Google Chrome and
 Firefox: their system-wide native messaging manifests name
 ${INSTALLED_HOST} and allow micoff's own extension ids only.
`;
}

// ---- the tree --------------------------------------------------------------------------------------

/** Writes `bytes` at `stage/rel` with `mode`, creating 0755 folders above it. */
function put(stage, rel, bytes, mode) {
  const path = join(stage, rel);
  mkdirs(stage, dirname(rel));
  writeFileSync(path, bytes);
  chmodSync(path, mode);
}

function mkdirs(stage, rel) {
  let at = stage;
  for (const part of rel.split('/').filter(Boolean)) {
    at = join(at, part);
    mkdirSync(at, { recursive: true });
    chmodSync(at, 0o755);
  }
}

/**
 * Stages the package's files (all but DEBIAN/) under `stage`: the stripped binary, the manifests
 * and their links, docs, man pages, completions, the lintian overrides. `files` is host-files.mjs's
 * `hostFiles` (made with pathInManifest = INSTALLED_HOST).
 */
export function stageTree(stage, { hostBin, files, licenseText, changelogMd, protocolMd, version, date }) {
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(stage, { recursive: true });
  chmodSync(stage, 0o755);
  put(stage, INSTALLED_HOST.slice(1), readFileSync(hostBin), 0o755);
  // As dh_strip does: no symbols, no .comment/.note (the build id stays).
  execFileSync('strip', [
    '--remove-section=.comment',
    '--remove-section=.note',
    '--strip-unneeded',
    join(stage, INSTALLED_HOST.slice(1)),
  ]);

  for (const { flavor, dir, link } of SYSTEM_MANIFESTS) {
    const manifest = files.manifests[flavor];
    const name = basename(manifest);
    if (link) {
      const home = `${MANIFEST_HOME}/${flavor}/${name}`;
      put(stage, home, readFileSync(manifest), 0o644);
      mkdirs(stage, dir);
      rmSync(join(stage, dir, name), { force: true });
      symlinkSync(`/${home}`, join(stage, dir, name));
    } else {
      put(stage, `${dir}/${name}`, readFileSync(manifest), 0o644);
    }
  }

  for (const page of files.man)
    put(stage, `usr/share/man/man1/${basename(page)}.gz`, gzip9n(readFileSync(page)), 0o644);
  for (const [shell, path] of Object.entries(COMPLETION_PATHS))
    put(stage, path, readFileSync(files.completions[shell]), 0o644);

  put(stage, `${DOC}/copyright`, copyrightText(licenseText), 0o644);
  put(stage, `${DOC}/changelog.gz`, gzip9n(Buffer.from(changelogMd)), 0o644);
  put(stage, `${DOC}/changelog.Debian.gz`, gzip9n(Buffer.from(changelogDebianText(version, date))), 0o644);
  put(stage, PROTOCOL_DOC, protocolMd, 0o644);
  put(stage, `usr/share/lintian/overrides/${DEB_PACKAGE}`, LINTIAN_OVERRIDES, 0o644);
}

/** Every path under `stage` (relative, sorted), with its lstat. */
export function walk(stage) {
  const out = [];
  const visit = (dir) => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      const st = lstatSync(path);
      out.push({ rel: relative(stage, path), path, st });
      if (st.isDirectory()) visit(path);
    }
  };
  visit(stage);
  return out;
}

/** Installed-Size as dpkg-gencontrol counts it: KiB per file rounded up, 1 per folder or link. */
export function installedSizeKib(entries) {
  return entries.reduce((kib, { st }) => kib + (st.isFile() ? Math.ceil(st.size / 1024) : 1), 0);
}

/** DEBIAN/md5sums: `<md5>  <path>` for every regular file. */
export function md5sumsText(entries) {
  return entries
    .filter(({ st }) => st.isFile())
    .map(({ rel, path }) => `${createHash('md5').update(readFileSync(path)).digest('hex')}  ${rel}\n`)
    .join('');
}

/**
 * The binary's Depends, from the shared libraries it links (dpkg-shlibdeps, as dh_shlibdeps does:
 * in a debian/ source folder with the binary in its package's tree, where dh_install puts it).
 */
export function shlibDepends(binary) {
  const dir = mkdtempSync(join(tmpdir(), 'micoff-shlibdeps-'));
  try {
    mkdirSync(join(dir, 'debian'));
    writeFileSync(
      join(dir, 'debian/control'),
      `Source: micoff\n\nPackage: ${DEB_PACKAGE}\nArchitecture: ${DEB_ARCH}\n`,
    );
    const placed = join(dir, 'debian', DEB_PACKAGE, INSTALLED_HOST.slice(1));
    mkdirSync(dirname(placed), { recursive: true });
    mkdirSync(join(dir, 'debian', DEB_PACKAGE, 'DEBIAN'));
    copyFileSync(binary, placed);
    const out = execFileSync('dpkg-shlibdeps', ['-O', relative(dir, placed)], { cwd: dir, encoding: 'utf8' });
    const m = /^shlibs:Depends=(.+)$/m.exec(out);
    if (!m?.[1]) throw new Error(`dpkg-shlibdeps found no dependencies of ${binary}: ${out}`);
    return m[1].trim();
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * Checks that every folder of SYSTEM_MANIFESTS is where `micoff-host install --system` puts that
 * browser's manifest (the installer's browser table is the home of those folders): its `--dry-run`
 * must name each of them.
 */
export function checkAgainstInstaller(hostBin) {
  const args = ['install', '--system', '--dry-run'];
  for (const { browser } of SYSTEM_MANIFESTS) args.push('--browser', browser);
  let out;
  try {
    out = execFileSync(hostBin, args, { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (e) {
    out = `${e.stdout ?? ''}${e.stderr ?? ''}`;
  }
  const missing = SYSTEM_MANIFESTS.filter(({ dir }) => !out.includes(`/${dir}/`));
  if (missing.length > 0)
    throw new Error(
      `micoff-host ${args.join(' ')} does not name ${missing.map((m) => `/${m.dir}/`).join(', ')}: ` +
        `the installer and the package disagree on the system folders\n${out}`,
    );
}

/**
 * Folders the package must not list although its files are in them: Debian's and Ubuntu's base-files
 * creates /etc/opt in its postinst, so dpkg owns it for no package. Listed in the package, dpkg would
 * count it as micoff-host's and remove it (empty, as it usually is) with micoff-host.
 */
export const UNLISTED_DIRS = ['etc/opt'];

/**
 * DEBIAN/preinst, the package's one maintainer script: dpkg unpacks /etc/opt/chrome/ only into an
 * existing /etc/opt (UNLISTED_DIRS), so where someone removed it, it is made again as base-files
 * makes it. Nothing else is needed at install or removal: no service, no generated file, no conffile.
 */
export const PREINST = `#!/bin/sh
# micoff-host: the package does not list /etc/opt, which base-files makes in its postinst and no
# package owns (listed, dpkg would remove it with micoff-host). Where it is missing, make it as
# base-files does, so that dpkg can unpack /etc/opt/chrome/.
set -e
if [ "$1" = install ] || [ "$1" = upgrade ]; then
  if [ ! -d "$DPKG_ROOT/etc/opt" ]; then
    mkdir "$DPKG_ROOT/etc/opt"
    chmod 755 "$DPKG_ROOT/etc/opt"
  fi
fi
exit 0
`;

/** An ar archive as dpkg-deb writes one: names space-padded, owner 0, mode 0644, `mtime` each. */
export function arArchive(members, mtime) {
  const parts = [Buffer.from('!<arch>\n', 'latin1')];
  for (const [name, bytes] of members) {
    const header =
      name.padEnd(16) +
      String(mtime).padEnd(12) +
      '0'.padEnd(6) +
      '0'.padEnd(6) +
      '100644'.padEnd(8) +
      String(bytes.length).padEnd(10) +
      '`\n';
    parts.push(Buffer.from(header, 'latin1'), bytes);
    if (bytes.length % 2 === 1) parts.push(Buffer.from('\n', 'latin1'));
  }
  return Buffer.concat(parts);
}

/** tar (GNU, owner root, every time `epoch`) of `names` under `dir`, in that order, xz-compressed. */
function tarXz(dir, names, epoch) {
  const tar = execFileSync(
    'tar',
    [
      '--no-recursion',
      '--owner=root:0',
      '--group=root:0',
      `--mtime=@${epoch}`,
      '--format=gnu',
      '-C',
      dir,
      '-cf',
      '-',
      '--null',
      '-T',
      '-',
    ],
    { input: `${names.join('\0')}\0`, maxBuffer: 512 * 1024 * 1024 },
  );
  return execFileSync('xz', ['-c', '-6', '--threads=1'], { input: tar, maxBuffer: 512 * 1024 * 1024 });
}

/**
 * The entries of the data archive in dpkg-deb's order (folders and files sorted, links last), less
 * UNLISTED_DIRS.
 */
export function dataEntries(entries) {
  const names = (list) => list.map(({ rel }) => `./${rel}`);
  const kept = entries.filter(
    ({ rel }) => rel !== 'DEBIAN' && !rel.startsWith('DEBIAN/') && !UNLISTED_DIRS.includes(rel),
  );
  const notLinks = kept.filter(({ st }) => !st.isSymbolicLink());
  const links = kept.filter(({ st }) => st.isSymbolicLink());
  return ['./', ...names(notLinks), ...names(links)];
}

/**
 * Builds the .deb into `outDir` from a staged tree (stageTree), adding DEBIAN/control and md5sums,
 * every time stamp set to `date` (so the same inputs give the same bytes). Returns its path. Packed
 * here rather than by `dpkg-deb --build`, which lists every folder (UNLISTED_DIRS says why not all);
 * `dpkg-deb --info` then reads it back. `revision`: the Debian revision, DEB_REVISION but for a
 * rebuild of an existing package (the e2e's upgrade).
 */
export function packDeb(stage, { version, revision = DEB_REVISION, date, outDir }) {
  const epoch = epochOf(date);
  const entries = walk(stage).filter(({ rel }) => rel !== 'DEBIAN' && !rel.startsWith('DEBIAN/'));
  const depends = shlibDepends(join(stage, INSTALLED_HOST.slice(1)));
  put(
    stage,
    'DEBIAN/control',
    controlText({ version, revision, installedSizeKib: installedSizeKib(entries), depends }),
    0o644,
  );
  put(stage, 'DEBIAN/md5sums', md5sumsText(entries), 0o644);
  put(stage, 'DEBIAN/preinst', PREINST, 0o755);
  const control = tarXz(
    join(stage, 'DEBIAN'),
    [
      './',
      ...readdirSync(join(stage, 'DEBIAN'))
        .sort()
        .map((n) => `./${n}`),
    ],
    epoch,
  );
  const data = tarXz(stage, dataEntries(entries), epoch);
  const deb = join(outDir, debFileName(version, revision));
  writeFileSync(
    deb,
    arArchive(
      [
        ['debian-binary', Buffer.from('2.0\n')],
        ['control.tar.xz', control],
        ['data.tar.xz', data],
      ],
      epoch,
    ),
  );
  execFileSync('dpkg-deb', ['--info', deb], { stdio: 'ignore' });
  return deb;
}

/**
 * lintian on `deb`: `{ errors, warnings, output }` (tag lines `E:` / `W:`; overridden tags are not
 * counted, the overrides file says why each is). Null when lintian is not installed.
 */
export function lintian(deb) {
  let output;
  try {
    output = execFileSync('lintian', ['--info', '--display-level', '>=pedantic', deb], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (e) {
    if (e.code === 'ENOENT') return null;
    output = `${e.stdout ?? ''}${e.stderr ?? ''}`;
  }
  const count = (level) => output.split('\n').filter((l) => l.startsWith(`${level}: `)).length;
  return { errors: count('E'), warnings: count('W'), output };
}
