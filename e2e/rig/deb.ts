// The micoff-host Debian package for the e2e (deb-package.spec.ts): the one `npm run package` packs
// from this checkout's build (or MICOFF_DEB), the same package packed again at a higher revision for
// the upgrade (scripts/host-package/rebuild-deb.mjs), the tools both need, and where the package puts
// the host and the manifests. The packaging is run as commands, not imported: the e2e sits below
// scripts/ in the import graph.
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { HOST_NAME } from '../../extension/src/shared/protocol.ts';
import { HOST_DEB, ROOT } from './paths.ts';
import { run, which } from './proc.ts';

/** Where the package installs the host (deb.mjs `INSTALLED_HOST`; scripts/host-package/deb.test.ts
 * checks it is the package's). */
export const PACKAGED_HOST = '/usr/bin/micoff-host';
/** The package's native messaging manifests, where each browser reads system-wide ones (deb.mjs
 * `SYSTEM_MANIFESTS`; checked by scripts/host-package/deb.test.ts). */
export const PACKAGED_MANIFESTS = {
  chromium: `/etc/chromium/native-messaging-hosts/${HOST_NAME}.json`,
  chrome: `/etc/opt/chrome/native-messaging-hosts/${HOST_NAME}.json`,
  firefox: `/usr/lib/mozilla/native-messaging-hosts/${HOST_NAME}.json`,
};

/** dpkg to install, dpkg-deb and dpkg-shlibdeps (dpkg-dev) to unpack and pack again, tar and xz. */
const TOOLS = ['dpkg', 'dpkg-query', 'dpkg-deb', 'dpkg-shlibdeps', 'tar', 'xz', 'man'] as const;

/** Why a .deb cannot be packed and installed here, or null (for `need`, rig/needs.ts). */
export function debToolsMissing(): string | null {
  const missing = TOOLS.filter((t) => !which(t));
  return missing.length
    ? `it needs ${missing.join(', ')} (dpkg, dpkg-dev, tar, xz-utils, man-db: bash scripts/ensure-deps.sh --package)`
    : null;
}

/** The paths a .deb's data holds (`dpkg-deb -c`), absolute, without a trailing slash. */
export function debPaths(deb: string): string[] {
  return execFileSync('dpkg-deb', ['-c', deb], { encoding: 'utf8' })
    .split('\n')
    .filter(Boolean)
    .map((line) => {
      // "drwxr-xr-x root/root 0 <day> <time> ./usr/bin/" (a link: "./a -> b")
      const name = line
        .split(/\s+/)
        .slice(5)
        .join(' ')
        .replace(/ -> .*$/, '');
      return name.replace(/^\./, '').replace(/\/$/, '') || '/';
    });
}

/** One field of a .deb's control file. */
export function debField(deb: string, name: string): string {
  return execFileSync('dpkg-deb', ['-f', deb, name], { encoding: 'utf8' }).trim();
}

/** The one line a packaging command prints that names the file it wrote, as an absolute path. */
function written(out: { code: number; stdout: string; stderr: string }, what: string, pattern: RegExp) {
  if (out.code !== 0) throw new Error(`${what} failed:\n${out.stdout}${out.stderr}`);
  const named = pattern.exec(out.stdout)?.[1];
  const path = named && (named.startsWith('/') ? named : join(ROOT, named));
  if (!path || !existsSync(path)) throw new Error(`${what} named no .deb:\n${out.stdout}`);
  return path;
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
  const args = ['--no-build', '--no-xpi', '--no-crx', '--deb', `--out-dir=${outDir}`];
  const packed = await run(process.execPath, [join(ROOT, 'scripts', 'package.mjs'), ...args], {
    timeoutMs: 90_000,
  });
  return written(packed, 'scripts/package.mjs', /^(\S+\.deb) /m);
}

/** `deb` packed again at Debian revision `revision` without the files `drop` (system paths), into
 * `outDir` (scripts/host-package/rebuild-deb.mjs). */
export async function rebuiltDeb(
  deb: string,
  o: { revision: string; drop: string[]; outDir: string },
): Promise<string> {
  const args = [
    deb,
    `--revision=${o.revision}`,
    ...o.drop.map((d) => `--drop=${d}`),
    `--out-dir=${o.outDir}`,
  ];
  const rebuilt = await run(
    process.execPath,
    [join(ROOT, 'scripts', 'host-package', 'rebuild-deb.mjs'), ...args],
    {
      timeoutMs: 60_000,
    },
  );
  return written(rebuilt, 'scripts/host-package/rebuild-deb.mjs', /^(\S+\.deb)$/m);
}
