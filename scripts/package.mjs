#!/usr/bin/env node
import { execFileSync } from 'node:child_process';
// `npm run package`: the release artifacts of the extension, from a fresh `npm run build`, and of the
// host, from a fresh `cargo build --release` (scripts/host-package/).
//
//   dist/micoff-<version>-chrome.zip   dist/chrome as the Chrome Web Store upload takes it
//   dist/micoff-<version>.xpi          dist/firefox, built by `web-ext build`
//   dist/micoff-<version>.crx          CRX3 signed with the release key when it is given, else with this
//                                      machine's local key (below)
//   dist/micoff-host_<version>-<rev>_amd64.deb          the host for Debian/Ubuntu, lintian-checked
//   dist/micoff-host-<version>-x86_64-linux-musl.tar.gz  the static host for other distributions,
//                                                      and its .sha256
//
// <version> is package.json's (the one version: both manifests and `micoff-host --version` take it).
//
// The release key (docs/design/packaging.md) is never in the repository. It is read from the PEM file
// named by $MICOFF_CRX_KEY (or --crx-key=PATH). Its public half must be the `key` in
// manifests/chrome.json: a crx signed with any other key would get another extension id, so a
// mismatch is an error, never a silent new id.
//
// Without the release key the crx is signed with a local key: made once, at
// ${XDG_CONFIG_HOME:-~/.config}/micoff/local-crx-key.pem (0600, never overwritten, reused by every later
// run), its public half the `key` of the crx's manifest, so the crx has that key's id, not micoff's.
// `micoff-host install --chromium-crx` accepts such a crx when it is micoff's and allows its id
// (docs/design/packaging.md, "A crx without the release key").
//
// --own-key (with a key): the packages take the KEY's public half as their manifest `key` instead,
// so the unpacked copy (<out>/chrome), the zip and the crx share that key's id: a fork's own key,
// or a throwaway key. Deliberately a different extension; a micoff-host answers it when built from
// that key (its id comes from manifests/chrome.json at build time), or once `micoff-host install
// --chromium-crx` installed its crx.
// --out-dir=DIR writes there instead of dist/ (the unpacked copy only with --own-key); --no-xpi
// skips the Firefox package, --no-crx the crx.
//
// --no-build packages what is built: the extension from dist/, and the host packages only when asked
// for with --deb / --static (from target/release and target/x86_64-unknown-linux-musl/release).
// Without it everything is built and packaged; --no-deb / --no-static leave a host package out. The
// host packages are micoff's (its extension ids are compiled into the host): never with --own-key.
// Their tools: bash scripts/ensure-deps.sh --package.
import { createHash, createPrivateKey, createPublicKey, generateKeyPairSync, sign } from 'node:crypto';
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { dirname, isAbsolute, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateRawSync } from 'node:zlib';
import { buildManifest, chromeIdFromKey, crc32 } from './build.mjs';
import { packageHost } from './host-package/host.mjs';

const ROOT = resolve(fileURLToPath(import.meta.url), '../..');
const DIST = join(ROOT, 'dist');
export const CRX_KEY_ENV = 'MICOFF_CRX_KEY';

/** The extension's files in dist/ for `version`: the Chrome zip, the Firefox xpi, the signed crx. */
export function extensionFiles(version) {
  return {
    zip: `micoff-${version}-chrome.zip`,
    xpi: `micoff-${version}.xpi`,
    crx: `micoff-${version}.crx`,
  };
}
/** Build outputs that are not part of the extension. */
const NOT_PACKAGED = new Set(['extension-id.txt']);

// ---- zip (deterministic: sorted entries, fixed timestamps) -------------------------------------------

function listFiles(dir) {
  const out = [];
  const walk = (d) => {
    for (const name of readdirSync(d).sort()) {
      const p = join(d, name);
      if (statSync(p).isDirectory()) walk(p);
      else if (!NOT_PACKAGED.has(relative(dir, p))) out.push(p);
    }
  };
  walk(dir);
  return out;
}

/** A zip of `files` ([name, bytes]), deflated, with a fixed 1980-01-01 timestamp so output is reproducible. */
export function zip(files) {
  const locals = [];
  const centrals = [];
  let offset = 0;
  const DOS_DATE = (0 << 9) | (1 << 5) | 1; // 1980-01-01
  for (const [name, data] of files) {
    const nameBytes = Buffer.from(name, 'utf8');
    const deflated = deflateRawSync(data, { level: 9 });
    const stored = deflated.length >= data.length;
    const body = stored ? data : deflated;
    const crc = crc32(data);
    // What a local header (from byte 4) and its central directory entry (from byte 6) both say.
    const shared = (header, at) => {
      header.writeUInt16LE(20, at); // version needed
      header.writeUInt16LE(0x0800, at + 2); // UTF-8 names
      header.writeUInt16LE(stored ? 0 : 8, at + 4);
      header.writeUInt16LE(0, at + 6);
      header.writeUInt16LE(DOS_DATE, at + 8);
      header.writeUInt32LE(crc, at + 10);
      header.writeUInt32LE(body.length, at + 14);
      header.writeUInt32LE(data.length, at + 18);
      header.writeUInt16LE(nameBytes.length, at + 22);
      header.writeUInt16LE(0, at + 24); // extra field length
    };
    const local = Buffer.alloc(30);
    local.writeUInt32LE(0x04034b50, 0);
    shared(local, 4);
    const central = Buffer.alloc(46);
    central.writeUInt32LE(0x02014b50, 0);
    central.writeUInt16LE((3 << 8) | 20, 4); // made by: Unix
    shared(central, 6);
    central.writeUInt32LE(((0o100644 << 16) >>> 0) >>> 0, 38); // -rw-r--r--
    central.writeUInt32LE(offset, 42);
    locals.push(local, nameBytes, body);
    centrals.push(central, nameBytes);
    offset += local.length + nameBytes.length + body.length;
  }
  const centralBytes = Buffer.concat(centrals);
  const end = Buffer.alloc(22);
  end.writeUInt32LE(0x06054b50, 0);
  end.writeUInt16LE(files.length, 8);
  end.writeUInt16LE(files.length, 10);
  end.writeUInt32LE(centralBytes.length, 12);
  end.writeUInt32LE(offset, 16);
  return Buffer.concat([...locals, centralBytes, end]);
}

export function zipDir(dir) {
  return zip(listFiles(dir).map((p) => [relative(dir, p).split('\\').join('/'), readFileSync(p)]));
}

// ---- CRX3 --------------------------------------------------------------------------------------------
// Format (Chromium components/crx_file/crx3.proto): "Cr24", u32le 3, u32le header size, CrxFileHeader,
// zip. CrxFileHeader { repeated AsymmetricKeyProof sha256_with_rsa = 2; bytes signed_header_data =
// 10000 } with AsymmetricKeyProof { bytes public_key = 1; bytes signature = 2 } and SignedData
// { bytes crx_id = 1 } (the first 16 bytes of sha256(public key)). The signature is RSA-SHA256 over
// "CRX3 SignedData\0" + u32le(len(signed_header_data)) + signed_header_data + zip.

function varint(n) {
  const out = [];
  let v = n;
  while (v >= 0x80) {
    out.push((v & 0x7f) | 0x80);
    v = Math.floor(v / 128);
  }
  out.push(v);
  return Buffer.from(out);
}

function field(number, bytes) {
  return Buffer.concat([varint(number * 8 + 2), varint(bytes.length), bytes]);
}

function le32(n) {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n);
  return b;
}

/** Signs `zipBytes` as a CRX3 with `privateKey` (a KeyObject). */
export function crx3(zipBytes, privateKey) {
  const spki = createPublicKey(privateKey).export({ type: 'spki', format: 'der' });
  const crxId = createHash('sha256').update(spki).digest().subarray(0, 16);
  const signedData = field(1, crxId);
  const signature = sign(
    'sha256',
    Buffer.concat([
      Buffer.from('CRX3 SignedData\0', 'latin1'),
      le32(signedData.length),
      signedData,
      zipBytes,
    ]),
    privateKey,
  );
  const proof = Buffer.concat([field(1, spki), field(2, signature)]);
  const header = Buffer.concat([field(2, proof), field(10000, signedData)]);
  return Buffer.concat([Buffer.from('Cr24', 'latin1'), le32(3), le32(header.length), header, zipBytes]);
}

/** Loads the release key and checks its public half is the manifest's `key` (else the id would change). */
export function loadReleaseKey(pemPath, manifestKeyBase64) {
  const key = createPrivateKey(readFileSync(pemPath));
  const spki = publicKeyBase64(key);
  if (spki !== manifestKeyBase64) {
    throw new Error(
      `${pemPath} is not micoff's release key: its public key gives extension id ` +
        `${chromeIdFromKey(spki)}, manifests/chrome.json's key gives ${chromeIdFromKey(manifestKeyBase64)}. ` +
        'A crx signed with it would install as a different extension; refusing.',
    );
  }
  return key;
}

// ---- the local key (no release key) -----------------------------------------------------------------

/** The local key's file name, in micoff's config folder. */
export const LOCAL_KEY_FILE = 'local-crx-key.pem';

/** Where the local key is kept: `$XDG_CONFIG_HOME/micoff/` (an absolute XDG_CONFIG_HOME only, as the
 * XDG spec says), else `~/.config/micoff/`. */
export function localKeyPath(env = process.env) {
  const xdg = env.XDG_CONFIG_HOME;
  const config = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.config');
  return join(config, 'micoff', LOCAL_KEY_FILE);
}

/**
 * The local key at `path`: the one there, else a new RSA key written there (folder 0700, file 0600,
 * created exclusively: an existing file is never overwritten). `created` says which.
 */
export function localKey(path) {
  if (!existsSync(path)) {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const pem = privateKey.export({ type: 'pkcs8', format: 'pem' });
    try {
      writeFileSync(path, pem, { mode: 0o600, flag: 'wx' });
      chmodSync(path, 0o600); // the umask cannot widen it
      return { key: privateKey, created: true };
    } catch (e) {
      if (e?.code !== 'EEXIST') throw e; // another run made it just now: that one is used
    }
  }
  try {
    return { key: createPrivateKey(readFileSync(path)), created: false };
  } catch (e) {
    throw new Error(
      `${path} is not a private key (${e?.message ?? e}): move it away and run again to make a new one ` +
        '(a new key gives the crx a new extension id)',
    );
  }
}

// ---- main --------------------------------------------------------------------------------------------

/** The base64 DER SubjectPublicKeyInfo of a private key: what a manifest `key` holds. */
export function publicKeyBase64(privateKey) {
  return createPublicKey(privateKey).export({ type: 'spki', format: 'der' }).toString('base64');
}

/**
 * `dir`'s files with manifest.json's `key` set to `keyBase64` (and extension-id.txt to its id), as
 * [name, bytes] pairs: the unpacked, zipped and packed forms of an --own-key package.
 */
export function filesWithKey(dir, keyBase64) {
  return listFiles(dir).map((p) => {
    const name = relative(dir, p).split('\\').join('/');
    if (name !== 'manifest.json') return [name, readFileSync(p)];
    const manifest = JSON.parse(readFileSync(p, 'utf8'));
    return [name, Buffer.from(`${JSON.stringify({ ...manifest, key: keyBase64 }, null, 2)}\n`)];
  });
}

function parseArgs(argv) {
  const opts = {
    crxKey: process.env[CRX_KEY_ENV] || undefined,
    build: true,
    ownKey: false,
    xpi: true,
    crx: true,
  };
  // Host packages: undefined = the default (built unless --no-build or --own-key).
  let deb;
  let tarball;
  for (const a of argv) {
    if (a.startsWith('--crx-key=')) opts.crxKey = a.slice('--crx-key='.length);
    else if (a === '--no-build') opts.build = false;
    else if (a === '--own-key') opts.ownKey = true;
    else if (a === '--no-xpi') opts.xpi = false;
    else if (a === '--no-crx') opts.crx = false;
    else if (a.startsWith('--out-dir=')) opts.outDir = resolve(a.slice('--out-dir='.length));
    else if (a === '--deb' || a === '--no-deb') deb = a === '--deb';
    else if (a === '--static' || a === '--no-static') tarball = a === '--static';
    else
      throw new Error(
        `unknown argument ${a} (use --crx-key=PATH, --own-key, --out-dir=DIR, --no-xpi, --no-crx, --no-build, --[no-]deb, --[no-]static)`,
      );
  }
  if (opts.ownKey && !opts.crxKey)
    throw new Error(`--own-key needs a key (--crx-key=PATH or ${CRX_KEY_ENV})`);
  if (opts.ownKey && (deb || tarball))
    throw new Error(
      "--own-key packs a different extension; the host packages are micoff's (no --deb/--static)",
    );
  const byDefault = opts.build && !opts.ownKey;
  opts.deb = deb ?? byDefault;
  opts.tarball = tarball ?? byDefault;
  return opts;
}

function main() {
  const opts = parseArgs(process.argv.slice(2));
  if (opts.build) execFileSync(process.execPath, [join(ROOT, 'scripts/build.mjs')], { stdio: 'inherit' });
  const out = opts.outDir ?? DIST;
  mkdirSync(out, { recursive: true });
  const shown = (p) => (p.startsWith(ROOT) ? relative(ROOT, p) : p);
  const chromeManifest = buildManifest('chrome');
  const version = chromeManifest.version;
  const built = JSON.parse(readFileSync(join(DIST, 'chrome/manifest.json'), 'utf8'));
  if (built.version !== version || built.key !== chromeManifest.key)
    throw new Error('dist/chrome is not the current build (run npm run build)');

  // The signing key, and the manifest `key` every Chrome form carries (the id follows from it).
  let key;
  let manifestKey = chromeManifest.key;
  if (opts.crxKey && opts.ownKey) {
    key = createPrivateKey(readFileSync(opts.crxKey));
    manifestKey = publicKeyBase64(key);
  } else if (opts.crxKey) {
    key = loadReleaseKey(opts.crxKey, chromeManifest.key);
  }
  const id = chromeIdFromKey(manifestKey);
  let zipBytes;
  if (opts.ownKey) {
    const files = filesWithKey(join(DIST, 'chrome'), manifestKey);
    const unpacked = join(out, 'chrome');
    rmSync(unpacked, { recursive: true, force: true });
    for (const [name, bytes] of files) {
      mkdirSync(dirname(join(unpacked, name)), { recursive: true });
      writeFileSync(join(unpacked, name), bytes);
    }
    writeFileSync(join(unpacked, 'extension-id.txt'), `${id}\n`);
    console.log(
      `${shown(unpacked)}/ (unpacked, own key: extension id ${id}, not micoff's ${chromeIdFromKey(chromeManifest.key)})`,
    );
    zipBytes = zip(files);
  } else {
    zipBytes = zipDir(join(DIST, 'chrome'));
  }
  const names = extensionFiles(version);
  const zipPath = join(out, names.zip);
  writeFileSync(zipPath, zipBytes);
  console.log(`${shown(zipPath)} (${zipBytes.length} bytes, extension id ${id})`);

  if (opts.xpi) {
    const xpiName = names.xpi;
    rmSync(join(out, xpiName), { force: true });
    execFileSync(
      join(ROOT, 'node_modules/.bin/web-ext'),
      ['build', '--source-dir', join(DIST, 'firefox'), '--artifacts-dir', out, '--filename', xpiName],
      { stdio: ['ignore', 'ignore', 'inherit'] },
    );
    const firefoxId = buildManifest('firefox').browser_specific_settings.gecko.id;
    console.log(
      `${shown(join(out, xpiName))} (${statSync(join(out, xpiName)).size} bytes, add-on id ${firefoxId}, unsigned)`,
    );
  }

  const crxPath = join(out, names.crx);
  if (opts.crx) rmSync(crxPath, { force: true }); // --no-crx leaves one made before as it is
  if (opts.crx && key) {
    const crx = crx3(zipBytes, key);
    writeFileSync(crxPath, crx);
    console.log(`${shown(crxPath)} (${crx.length} bytes, extension id ${id})`);
  } else if (opts.crx) {
    const keyPath = localKeyPath();
    const local = localKey(keyPath);
    const localPublic = publicKeyBase64(local.key);
    const crx = crx3(zip(filesWithKey(join(DIST, 'chrome'), localPublic)), local.key);
    writeFileSync(crxPath, crx);
    console.log(
      `${shown(crxPath)} (${crx.length} bytes): no release key (${CRX_KEY_ENV}), so signed with this ` +
        `machine's local key ${keyPath} (${local.created ? 'made now' : 'kept from an earlier run'}): ` +
        `extension id ${chromeIdFromKey(localPublic)}, which micoff-host install --chromium-crx allows`,
    );
  }

  if (opts.deb || opts.tarball)
    packageHost({ root: ROOT, outDir: out, build: opts.build, deb: opts.deb, tarball: opts.tarball });
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  try {
    main();
  } catch (err) {
    console.error(`package failed: ${err?.message ?? err}`);
    process.exit(1);
  }
}
