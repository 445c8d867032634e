#!/usr/bin/env node
// Checks a built micoff-host .deb as a user's dpkg would see it: `node check-deb.mjs <deb>` prints each
// problem and exits 1 when there is one. `npm test` runs it on the package it builds.
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync } from 'node:zlib';
import { extensionIds } from '../build.mjs';
import {
  COMPLETION_PATHS,
  DEB_PACKAGE,
  DOC_DIR,
  INSTALLED_HOST,
  PREINST,
  PROTOCOL_DOC,
  SYSTEM_MANIFESTS,
  UNLISTED_DIRS,
} from './deb.mjs';

/** `dpkg-deb -c`'s lines as `{ mode, owner, path, link }`. */
export function listing(deb) {
  return execFileSync('dpkg-deb', ['-c', deb], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      const [mode, owner, , , , ...rest] = line.split(/\s+/);
      const [path, link] = rest.join(' ').split(' -> ');
      return { mode, owner, path: (path ?? '').replace(/^\.\//, '/'), link };
    });
}

/** The paths under the package's doc folder a man page's roff cites (its `\-` read as `-`). */
export function citedDocs(roff) {
  const text = roff.replaceAll('\\-', '-');
  const prefix = DOC_DIR.replaceAll(/[.*+?^${}()|[\]\\/]/g, '\\$&');
  return [...new Set([...text.matchAll(new RegExp(`${prefix}/[\\w.-]*\\w`, 'g'))].map((m) => m[0]))];
}

/** The words typed before TAB, and the word the completion must offer. */
const TYPED = ['micoff-host', 'install', '--b'];
const OFFERED = '--browser';

/**
 * Problems of the shipped completion `file` for `shell` (bash, fish): it must offer `--browser` for
 * `micoff-host install --b<TAB>`, as the shell itself computes it. zsh's is the same generator's,
 * run in zsh by micoff-dist's tests (tests/shells.rs). The shells run with `home` as HOME (fish
 * keeps its state there).
 */
function completes(shell, file, home) {
  const line = TYPED.join(' ');
  const [program, args] =
    shell === 'bash'
      ? [
          'bash',
          [
            '--norc',
            '--noprofile',
            '-c',
            `source "$1"; fn=$(complete -p micoff-host | sed -n 's/.*-F \\([^ ]*\\) .*/\\1/p');
COMP_WORDS=(${line}); COMP_CWORD=${TYPED.length - 1}; COMP_LINE="${line}"; COMP_POINT=\${#COMP_LINE};
"$fn" micoff-host "${TYPED.at(-1)}" "${TYPED.at(-2)}"; printf '%s\\n' "\${COMPREPLY[@]}"`,
            'bash',
            file,
          ],
        ]
      : ['fish', ['--no-config', '-c', `source $argv[1]; complete -C '${line}'`, file]];
  let out;
  try {
    const env = {
      ...process.env,
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      XDG_DATA_HOME: join(home, '.local/share'),
    };
    out = execFileSync(program, args, {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
      timeout: 30_000,
      env,
    });
  } catch (e) {
    if (e.code === 'ENOENT') return [`${shell} is not installed (bash scripts/ensure-deps.sh --package)`];
    return [`${shell} completion failed: ${`${e.stderr ?? e.message}`.trim()}`];
  }
  const words = out.split('\n').map((l) => l.split('\t')[0]);
  return words.includes(OFFERED)
    ? []
    : [`${shell} completes \`${line}<TAB>\` to ${JSON.stringify(words.filter(Boolean))}, not ${OFFERED}`];
}

/** What is wrong with `deb` for `version` (none: an empty list). */
export function checkDeb(deb, version) {
  const problems = [];
  const field = (name) => execFileSync('dpkg-deb', ['-f', deb, name], { encoding: 'utf8' }).trim();
  if (field('Package') !== DEB_PACKAGE) problems.push(`Package is ${field('Package')}`);
  if (!field('Version').startsWith(`${version}-`))
    problems.push(`Version ${field('Version')} is not ${version}'s`);
  if (!/\blibc6\b/.test(field('Depends'))) problems.push(`Depends (${field('Depends')}) lacks libc6`);

  // Every entry root's, folders 0755, files 0644, the binary 0755.
  const entries = listing(deb);
  for (const { mode, owner, path } of entries) {
    if (owner !== 'root/root') problems.push(`${path} is owned by ${owner}`);
    const want = mode.startsWith('d')
      ? 'drwxr-xr-x'
      : mode.startsWith('l')
        ? 'lrwxrwxrwx'
        : path === INSTALLED_HOST
          ? '-rwxr-xr-x'
          : '-rw-r--r--';
    if (mode !== want) problems.push(`${path} has mode ${mode}, not ${want}`);
  }

  // Control: no conffiles, no maintainer script but the preinst that makes /etc/opt where it is
  // missing (docs/design/packaging.md says why no other is needed).
  const control = execFileSync('dpkg-deb', ['--ctrl-tarfile', deb]);
  const controlNames = execFileSync('tar', ['-t'], { input: control, encoding: 'utf8' })
    .split('\n')
    .map((n) => n.replace(/^\.\//, ''));
  for (const name of ['conffiles', 'postinst', 'prerm', 'postrm'])
    if (controlNames.includes(name)) problems.push(`the package has a ${name}`);
  const preinst = execFileSync('dpkg-deb', ['-I', deb, 'preinst'], { encoding: 'utf8' });
  if (preinst !== PREINST) problems.push('the preinst is not deb.mjs PREINST');
  // Folders base-files makes and no package owns: never listed (dpkg would remove them with us).
  for (const dir of UNLISTED_DIRS)
    if (entries.some((e) => e.path === `/${dir}/`)) problems.push(`the package lists /${dir}/`);

  const root = mkdtempSync(join(tmpdir(), 'micoff-check-deb-'));
  try {
    execFileSync('dpkg-deb', ['-x', deb, root]);
    const inRoot = (p) => join(root, p);
    const { chromeId, firefoxId } = extensionIds();
    const allowed = { chromium: [`chrome-extension://${chromeId}/`], firefox: [firefoxId] };
    for (const { browser, flavor, dir, link } of SYSTEM_MANIFESTS) {
      const names = existsSync(inRoot(dir)) ? readdirSync(inRoot(dir)) : [];
      if (names.length !== 1 || !names[0]) {
        problems.push(`/${dir}/ holds ${names.length} files, not one manifest`);
        continue;
      }
      const entry = entries.find((e) => e.path === `/${dir}/${names[0]}`);
      // An absolute link, read inside the extracted tree.
      const real = link ? (entry?.link ?? '') : `/${dir}/${names[0]}`;
      if (link && !real.startsWith('/usr/'))
        problems.push(`/${dir}/${names[0]} is not a link into /usr: ${real}`);
      if (!existsSync(inRoot(real))) {
        problems.push(`${browser}: /${dir}/${names[0]} leads to ${real}, which the package lacks`);
        continue;
      }
      const manifest = JSON.parse(readFileSync(inRoot(real), 'utf8'));
      if (`${manifest.name}.json` !== names[0])
        problems.push(`${browser}: ${names[0]} names ${manifest.name}`);
      if (manifest.path !== INSTALLED_HOST) problems.push(`${browser}: path ${manifest.path}`);
      const got = flavor === 'firefox' ? manifest.allowed_extensions : manifest.allowed_origins;
      if (JSON.stringify(got) !== JSON.stringify(allowed[flavor]))
        problems.push(`${browser}: allows ${JSON.stringify(got)}, not ${JSON.stringify(allowed[flavor])}`);
    }
    if (!existsSync(inRoot(INSTALLED_HOST))) problems.push(`no ${INSTALLED_HOST}`);

    // Man pages: micoff-host.1 and every page a page refers to (its SUBCOMMANDS section).
    const manDir = inRoot('usr/share/man/man1');
    const pages = new Set(existsSync(manDir) ? readdirSync(manDir) : []);
    if (!pages.has('micoff-host.1.gz')) problems.push('no micoff-host.1.gz');
    for (const page of pages) {
      const roff = gunzipSync(readFileSync(join(manDir, page))).toString('utf8');
      if (!roff.includes('.TH ')) problems.push(`${page} is not a man page`);
      // Every file of the doc folder a page cites (the protocol's description) is in the package.
      for (const cited of citedDocs(roff))
        if (!existsSync(inRoot(cited.slice(1)))) problems.push(`${page} cites ${cited}, which is missing`);
      for (const m of roff.matchAll(/(micoff\\-host(?:\\-[a-z]+)*)\(1\)/g)) {
        const ref = `${(m[1] ?? '').replaceAll('\\-', '-')}.1.gz`;
        if (!pages.has(ref)) problems.push(`${page} refers to ${ref}, which is missing`);
      }
    }
    for (const [shell, path] of Object.entries(COMPLETION_PATHS))
      if (!existsSync(inRoot(path)) || statSync(inRoot(path)).size === 0)
        problems.push(`no ${shell} completion at /${path}`);
      else if (shell !== 'zsh') problems.push(...completes(shell, inRoot(path), root));
    const doc = inRoot(`usr/share/doc/${DEB_PACKAGE}`);
    for (const name of ['copyright', 'changelog.gz', 'changelog.Debian.gz'])
      if (!existsSync(join(doc, name))) problems.push(`no /usr/share/doc/${DEB_PACKAGE}/${name}`);
    if (!existsSync(inRoot(PROTOCOL_DOC))) problems.push(`no /${PROTOCOL_DOC}`);
    if (
      existsSync(join(doc, 'copyright')) &&
      !readFileSync(join(doc, 'copyright'), 'utf8').startsWith('Format: ')
    )
      problems.push('copyright is not machine-readable (DEP-5)');
  } finally {
    rmSync(root, { recursive: true, force: true });
  }
  return problems;
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const [deb] = process.argv.slice(2);
  if (!deb) {
    console.error('usage: check-deb.mjs <micoff-host_*.deb>');
    process.exit(2);
  }
  const root = resolve(fileURLToPath(import.meta.url), '../../..');
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  const problems = checkDeb(deb, version);
  for (const p of problems) console.error(`check-deb: ${p}`);
  console.log(`${deb}: ${problems.length === 0 ? 'ok' : `${problems.length} problems`}`);
  process.exit(problems.length === 0 ? 0 : 1);
}
