// `npm run package`'s host part: the Debian package and the static tarball of micoff-host, from
// the one version (package.json), its CHANGELOG.md entry (the date) and LICENSE.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join, relative } from 'node:path';
import { releaseEntry } from './changelog.mjs';
import { checkAgainstInstaller, INSTALLED_HOST, lintian, packDeb, stageTree } from './deb.mjs';
import { hostFiles } from './host-files.mjs';
import { buildStaticHost, checkStatic, libpulsePrefix, staticHostPath, writeTarball } from './static.mjs';

/**
 * Builds the host packages into `outDir`. `build`: cargo builds what is needed first (else the
 * binaries in target/ are used as they are); `deb`, `tarball`: which packages. Returns the paths written.
 */
export function packageHost({ root, outDir, build, deb, tarball }) {
  const shown = (p) => (p.startsWith(root) ? relative(root, p) : p);
  const version = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).version;
  const changelogMd = readFileSync(join(root, 'CHANGELOG.md'), 'utf8');
  const { date } = releaseEntry(changelogMd, version);
  const licenseText = readFileSync(join(root, 'LICENSE'), 'utf8');
  const protocolMd = readFileSync(join(root, 'native-host/PROTOCOL.md'), 'utf8');
  const targetDir = process.env.CARGO_TARGET_DIR ?? join(root, 'target');
  const work = join(targetDir, 'host-package');

  if (build)
    execFileSync('cargo', ['build', '--release', '--locked', '-p', 'micoff-host', '-p', 'micoff-dist'], {
      cwd: root,
      stdio: 'inherit',
    });
  const hostBin = join(targetDir, 'release/micoff-host');
  const distBin = join(targetDir, 'release/micoff-dist');
  for (const bin of [hostBin, distBin])
    if (!existsSync(bin))
      throw new Error(`${shown(bin)} is not built (cargo build --release -p micoff-host -p micoff-dist)`);
  const files = hostFiles({ hostBin, distBin, outDir: join(work, 'files'), pathInManifest: INSTALLED_HOST });
  const written = [];

  if (deb) {
    checkAgainstInstaller(hostBin);
    const stage = join(work, 'deb-root');
    stageTree(stage, { hostBin, files, licenseText, changelogMd, protocolMd, version, date });
    const path = packDeb(stage, { version, date, outDir });
    const lint = lintian(path);
    const verdict = lint
      ? `lintian: ${lint.errors} errors, ${lint.warnings} warnings`
      : 'lintian: not installed, not checked (bash scripts/ensure-deps.sh --package)';
    console.log(`${shown(path)} (${statSync(path).size} bytes, ${verdict})`);
    if (lint && lint.errors > 0) throw new Error(`lintian found errors in ${shown(path)}:\n${lint.output}`);
    written.push(path);
  }

  if (tarball) {
    const binary = build ? buildStaticHost(root, targetDir) : staticHostPath(targetDir);
    if (!existsSync(binary))
      throw new Error(`${shown(binary)} is not built (npm run package without --no-build builds it)`);
    checkStatic(binary, version);
    const prefix = libpulsePrefix(targetDir);
    const out = writeTarball({
      stageRoot: join(work, 'static'),
      outDir,
      version,
      date,
      binary,
      files,
      licenseText,
      changelogMd,
      protocolMd,
      prefix,
    });
    console.log(`${shown(out.tarball)} (${statSync(out.tarball).size} bytes, static, libpulse linked in)`);
    console.log(`${shown(out.sumFile)}`);
    written.push(out.tarball, out.sumFile);
  }
  return written;
}
