// The static x86_64 micoff-host for other distributions: a musl build with PulseAudio's client library
// linked in (libpulse-musl.sh), in dist/micoff-host-<version>-x86_64-linux-musl.tar.gz with its
// .sha256. Why libpulse is built rather than replaced: docs/design/packaging.md "The static build".
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { epochOf, gzip9n } from './reproducible.mjs';

const HERE = dirname(fileURLToPath(import.meta.url));
export const MUSL_TARGET = 'x86_64-unknown-linux-musl';

export function tarballBase(version) {
  return `micoff-host-${version}-x86_64-linux-musl`;
}

// ---- ELF: is it static? ----------------------------------------------------------------------------

const PT_DYNAMIC = 2;
const PT_INTERP = 3;
const DT_NEEDED = 1;

/**
 * What an ELF64 little-endian executable needs at run time: `{ interpreter, needed }` (the PT_INTERP
 * path or null, the number of DT_NEEDED libraries). A static (or static-pie) binary has neither.
 */
export function elfRuntimeNeeds(bytes) {
  if (bytes.readUInt32BE(0) !== 0x7f454c46 || bytes[4] !== 2 || bytes[5] !== 1)
    throw new Error('not an ELF64 little-endian file');
  const phoff = Number(bytes.readBigUInt64LE(0x20));
  const phentsize = bytes.readUInt16LE(0x36);
  const phnum = bytes.readUInt16LE(0x38);
  let interpreter = null;
  let needed = 0;
  for (let i = 0; i < phnum; i++) {
    const ph = phoff + i * phentsize;
    const type = bytes.readUInt32LE(ph);
    const offset = Number(bytes.readBigUInt64LE(ph + 8));
    const size = Number(bytes.readBigUInt64LE(ph + 32));
    if (type === PT_INTERP)
      interpreter = bytes
        .subarray(offset, offset + size)
        .toString('latin1')
        .replace(/\0.*$/s, '');
    if (type === PT_DYNAMIC) {
      for (let at = offset; at + 16 <= offset + size; at += 16) {
        const tag = bytes.readBigInt64LE(at);
        if (tag === 0n) break;
        if (tag === BigInt(DT_NEEDED)) needed++;
      }
    }
  }
  return { interpreter, needed };
}

// ---- the build -------------------------------------------------------------------------------------

function muslTargetInstalled() {
  try {
    return execFileSync('rustup', ['target', 'list', '--installed'], { encoding: 'utf8' })
      .split('\n')
      .includes(MUSL_TARGET);
  } catch {
    return false; // no rustup: cargo will say whether the target's std is there
  }
}

/** libpulse-musl.sh's work folder (a cache) under cargo's target folder. */
function libpulseWork(targetDir) {
  return join(targetDir, 'libpulse-musl');
}

/** The static libpulse build: lib/, SOURCES and the license files (libpulse-musl.sh's output). */
export function libpulsePrefix(targetDir) {
  return join(libpulseWork(targetDir), 'prefix');
}

/** Where cargo puts the static micoff-host. */
export function staticHostPath(targetDir) {
  return join(targetDir, MUSL_TARGET, 'release/micoff-host');
}

/**
 * Builds libpulse for musl (cached in target/libpulse-musl/) and `micoff-host` for MUSL_TARGET
 * against it. Returns the binary's path.
 */
export function buildStaticHost(root, targetDir) {
  if (!muslTargetInstalled() && existsSync(join(process.env.HOME ?? '', '.cargo/bin/rustup')))
    throw new Error(
      `the Rust target ${MUSL_TARGET} is not installed: rustup target add ${MUSL_TARGET} (or bash scripts/ensure-deps.sh --package)`,
    );
  execFileSync('bash', [join(HERE, 'libpulse-musl.sh'), libpulseWork(targetDir)], { stdio: 'inherit' });
  const prefix = libpulsePrefix(targetDir);
  execFileSync('cargo', ['build', '--release', '--locked', '-p', 'micoff-host', '--target', MUSL_TARGET], {
    cwd: root,
    stdio: 'inherit',
    env: {
      ...process.env,
      // libpulse-sys finds libpulse through pkg-config: only the static musl build, linked statically.
      PKG_CONFIG_ALLOW_CROSS: '1',
      PKG_CONFIG_LIBDIR: join(prefix, 'lib/pkgconfig'),
      PKG_CONFIG_PATH: '',
      PKG_CONFIG_ALL_STATIC: '1',
    },
  });
  return staticHostPath(targetDir);
}

/** Throws unless `binary` is static and says it is micoff-host `version`. */
export function checkStatic(binary, version) {
  const { interpreter, needed } = elfRuntimeNeeds(readFileSync(binary));
  if (interpreter || needed > 0)
    throw new Error(`${binary} is not static: interpreter ${interpreter}, ${needed} shared libraries`);
  const said = execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
  if (said !== `micoff-host ${version}`) throw new Error(`${binary} --version says ${said}`);
}

// ---- the tarball -----------------------------------------------------------------------------------

/** The `.sha256` file: what `sha256sum -c` checks (`<hex>  <name>`). */
export function sha256Line(name, bytes) {
  return `${createHash('sha256').update(bytes).digest('hex')}  ${name}\n`;
}

export function readmeText(version, pulseSources) {
  return `micoff-host ${version}, static build for x86_64 Linux (musl)

micoff-host is the native messaging host and the command-line tools of micoff.
This build needs no library at run time: PulseAudio's client library is linked
in (${pulseSources.join(', ')}), so it talks to PulseAudio and to
PipeWire (pipewire-pulse) as the distribution build does. It reads
/etc/pulse/client.conf and ~/.config/pulse/ as any PulseAudio client.

For yourself:
    install -D -m 0755 micoff-host ~/.local/bin/micoff-host
    ~/.local/bin/micoff-host install     # your browsers' native messaging manifests
    ~/.local/bin/micoff-host doctor

For every user (as root):
    install -m 0755 micoff-host /usr/local/bin/micoff-host
    /usr/local/bin/micoff-host install --system

On Debian and Ubuntu the .deb (micoff-host_${version}-*_amd64.deb) does the system-wide part.
man/man1/ has a man page per command (man -l man/man1/micoff-host.1), completions/ the
bash, zsh and fish completions.

Check the download: sha256sum -c ${tarballBase(version)}.tar.gz.sha256
Licenses: LICENSE (micoff: MIT); THIRD-PARTY and licenses/ (what is linked in).
`;
}

export function thirdPartyText(pulseSources) {
  return `Linked into this micoff-host (micoff itself: MIT, LICENSE):

- PulseAudio's client library (libpulse and libpulsecommon), LGPL-2.1-or-later:
  licenses/pulseaudio-LICENSE, licenses/pulseaudio-LGPL. Built without D-Bus, so no
  GPL part is in (see pulseaudio-LICENSE).
- libsndfile, LGPL-2.1-or-later: licenses/libsndfile-COPYING.
- musl libc (MIT: licenses/musl-copyright) and LLVM's libunwind (Apache-2.0 WITH
  LLVM-exception), from Rust's ${MUSL_TARGET} target; Rust's standard library and
  the crates micoff-host uses (MIT or Apache-2.0: cargo tree -p micoff-host -e normal
  --format "{p} {l}" in micoff's source).

Sources of the LGPL libraries, as built here: the Debian source packages
${pulseSources.map((s) => `  ${s}`).join('\n')}
fetched and built by scripts/host-package/libpulse-musl.sh in micoff's source for
this version. To relink micoff-host with a changed libpulse or libsndfile (LGPL-2.1
section 6), change them in that script's work folder and run npm run package.
`;
}

/**
 * Writes `<outDir>/<base>.tar.gz` (a folder `<base>/` with the binary, docs, man pages, completions
 * and license notices; sorted, owner 0, every time stamp `date`) and its `.sha256`. Returns both paths.
 */
export function writeTarball({
  stageRoot,
  outDir,
  version,
  date,
  binary,
  files,
  licenseText,
  changelogMd,
  protocolMd,
  prefix,
}) {
  const base = tarballBase(version);
  const top = join(stageRoot, base);
  rmSync(stageRoot, { recursive: true, force: true });
  const into = (rel, bytes) => {
    mkdirSync(dirname(join(top, rel)), { recursive: true });
    writeFileSync(join(top, rel), bytes);
  };
  const sources = readFileSync(join(prefix, 'SOURCES'), 'utf8').split('\n').filter(Boolean);
  mkdirSync(top, { recursive: true });
  copyFileSync(binary, join(top, 'micoff-host'));
  execFileSync('strip', ['--remove-section=.comment', '--strip-unneeded', join(top, 'micoff-host')]);
  into('README', readmeText(version, sources));
  into('LICENSE', licenseText);
  into('CHANGELOG.md', changelogMd);
  into('PROTOCOL.md', protocolMd);
  into('THIRD-PARTY', thirdPartyText(sources));
  for (const lic of ['pulseaudio-LICENSE', 'pulseaudio-LGPL', 'libsndfile-COPYING'])
    into(`licenses/${lic}`, readFileSync(join(prefix, lic)));
  into('licenses/musl-copyright', readFileSync('/usr/share/doc/musl/copyright'));
  for (const page of files.man) into(`man/man1/${basename(page)}`, readFileSync(page));
  for (const path of Object.values(files.completions))
    into(`completions/${basename(path)}`, readFileSync(path));
  execFileSync('chmod', ['-R', 'u=rwX,go=rX', top]);
  execFileSync('chmod', ['0755', join(top, 'micoff-host')]);

  const tar = execFileSync(
    'tar',
    [
      '--sort=name',
      '--owner=0',
      '--group=0',
      '--numeric-owner',
      `--mtime=@${epochOf(date)}`,
      '--format=gnu',
      '-C',
      stageRoot,
      '-cf',
      '-',
      base,
    ],
    { maxBuffer: 256 * 1024 * 1024 },
  );
  const gz = gzip9n(tar);
  const tarball = join(outDir, `${base}.tar.gz`);
  writeFileSync(tarball, gz);
  const sumFile = `${tarball}.sha256`;
  writeFileSync(sumFile, sha256Line(basename(tarball), gz));
  return { tarball, sumFile };
}
