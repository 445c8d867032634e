// The micoff-host Debian package for the e2e (deb-package.spec.ts): the one `npm run package` packs
// from this checkout's build (or MICOFF_DEB), a rebuild of it at a higher revision for the upgrade,
// and the tools both need. The rebuild goes through the package's own packer (deb.mjs `packDeb`),
// so it is the same package built again, not a copy with an edited version field.
import { execFileSync } from 'node:child_process';
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { releaseEntry } from '../../scripts/host-package/changelog.mjs';
import { packDeb } from '../../scripts/host-package/deb.mjs';
import { HOST_DEB, ROOT } from './paths.ts';
import { run, which } from './proc.ts';

/** dpkg to install, dpkg-deb and dpkg-shlibdeps (dpkg-dev) to unpack and pack again, tar and xz. */
const TOOLS = ['dpkg', 'dpkg-query', 'dpkg-deb', 'dpkg-shlibdeps', 'tar', 'xz'] as const;

/** Why a .deb cannot be packed and installed here, or null (for `need`, rig/needs.ts). */
export function debToolsMissing(): string | null {
  const missing = TOOLS.filter((t) => !which(t));
  return missing.length
    ? `it needs ${missing.join(', ')} (dpkg, dpkg-dev, tar, xz-utils: bash scripts/ensure-deps.sh --package)`
    : null;
}

/** One field of a .deb's control file. */
export function debField(deb: string, name: string): string {
  return execFileSync('dpkg-deb', ['-f', deb, name], { encoding: 'utf8' }).trim();
}

/** `{ upstream, revision }` of a Debian version `<upstream>-<revision>`. */
export function splitDebVersion(version: string): { upstream: string; revision: string } {
  const at = version.lastIndexOf('-');
  if (at <= 0) throw new Error(`${version} is not <upstream>-<revision>`);
  return { upstream: version.slice(0, at), revision: version.slice(at + 1) };
}

/**
 * The .deb under test: MICOFF_DEB when set, else the one `npm run package -- --no-build --no-xpi
 * --deb` packs into `outDir` from target/release (micoff-host and micoff-dist must be built).
 */
export async function packagedDeb(outDir: string): Promise<string> {
  if (HOST_DEB) {
    if (!existsSync(HOST_DEB)) throw new Error(`MICOFF_DEB=${HOST_DEB}: no such file`);
    return HOST_DEB;
  }
  const packed = await run(
    process.execPath,
    [join(ROOT, 'scripts', 'package.mjs'), '--no-build', '--no-xpi', '--deb', `--out-dir=${outDir}`],
    { timeoutMs: 90_000 },
  );
  if (packed.code !== 0) throw new Error(`scripts/package.mjs failed:\n${packed.stdout}${packed.stderr}`);
  const deb = /^(\S+\.deb) /m.exec(packed.stdout)?.[1];
  const path = deb && (deb.startsWith('/') ? deb : join(ROOT, deb));
  if (!path || !existsSync(path)) throw new Error(`scripts/package.mjs named no .deb:\n${packed.stdout}`);
  return path;
}

/**
 * `deb` packed again at Debian revision `revision` without the files `drop` (paths on the system,
 * `/usr/share/…`): unpacked by dpkg-deb, packed by deb.mjs `packDeb` (control, md5sums and the
 * preinst made afresh; any other maintainer script in its DEBIAN/ kept), into `outDir`.
 */
export function rebuiltDeb(deb: string, o: { revision: string; drop: string[]; outDir: string }): string {
  const { upstream } = splitDebVersion(debField(deb, 'Version'));
  const { date } = releaseEntry(readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8'), upstream);
  const stage = join(o.outDir, 'stage');
  rmSync(stage, { recursive: true, force: true });
  mkdirSync(o.outDir, { recursive: true });
  execFileSync('dpkg-deb', ['-R', deb, stage]);
  chmodSync(stage, 0o755); // the data archive's `./`, as stageTree makes it
  for (const path of o.drop) {
    if (!existsSync(join(stage, path))) throw new Error(`${deb} has no ${path} to drop`);
    rmSync(join(stage, path));
  }
  return packDeb(stage, { version: upstream, revision: o.revision, date, outDir: o.outDir });
}
