#!/usr/bin/env node
// `node rebuild-deb.mjs DEB --revision=N [--drop=/path/on/the/system]... --out-dir=DIR`: the package
// DEB packed again by deb.mjs `packDeb` at Debian revision N, without the dropped files, into DIR; the
// path of the new .deb is the one line it prints. Unpacked by `dpkg-deb -R`; control, md5sums and the
// preinst are made afresh, any other maintainer script in its DEBIAN/ is kept, every time stamp is the
// date of CHANGELOG.md's entry for the package's version. What it is for: an upgrade to "the same
// package, rebuilt with a higher version" (e2e/tests/deb-package.spec.ts, run as a command so that
// the e2e does not import the packaging).
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { releaseEntry } from './changelog.mjs';
import { packDeb } from './deb.mjs';

const ROOT = resolve(fileURLToPath(import.meta.url), '../../..');

/** `{ upstream, revision }` of a Debian version `<upstream>-<revision>`. */
export function splitDebVersion(version) {
  const at = version.lastIndexOf('-');
  if (at <= 0) throw new Error(`${version} is not <upstream>-<revision>`);
  return { upstream: version.slice(0, at), revision: version.slice(at + 1) };
}

/** `deb` packed again at `revision` without `drop` (system paths) into `outDir`; returns its path. */
export function rebuildDeb(deb, { revision, drop = [], outDir, changelogMd }) {
  const version = execFileSync('dpkg-deb', ['-f', deb, 'Version'], { encoding: 'utf8' }).trim();
  const { upstream } = splitDebVersion(version);
  const { date } = releaseEntry(changelogMd, upstream);
  const stage = join(outDir, 'stage');
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(outDir, { recursive: true });
  execFileSync('dpkg-deb', ['-R', deb, stage]);
  chmodSync(stage, 0o755); // the data archive's `./`, as stageTree makes it
  for (const path of drop) {
    if (!existsSync(join(stage, path))) throw new Error(`${deb} has no ${path} to drop`);
    rmSync(join(stage, path));
  }
  const out = packDeb(stage, { version: upstream, revision, date, outDir });
  rmSync(stage, { recursive: true, force: true });
  return out;
}

function main(argv) {
  const opts = { drop: [] };
  const debs = [];
  for (const a of argv) {
    if (a.startsWith('--revision=')) opts.revision = a.slice('--revision='.length);
    else if (a.startsWith('--drop=')) opts.drop.push(a.slice('--drop='.length));
    else if (a.startsWith('--out-dir=')) opts.outDir = resolve(a.slice('--out-dir='.length));
    else if (!a.startsWith('--')) debs.push(resolve(a));
    else throw new Error(`unknown argument ${a}`);
  }
  if (debs.length !== 1 || !/^\d+$/.test(opts.revision ?? '') || !opts.outDir)
    throw new Error('usage: rebuild-deb.mjs DEB --revision=N [--drop=/path]... --out-dir=DIR');
  const changelogMd = readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8');
  console.log(rebuildDeb(debs[0], { ...opts, changelogMd }));
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main(process.argv.slice(2));
  } catch (err) {
    console.error(`rebuild-deb: ${err?.message ?? err}`);
    process.exit(1);
  }
}
