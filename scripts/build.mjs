#!/usr/bin/env node
// `npm run build`: bundles the extension with esbuild into dist/chrome and dist/firefox (manifests
// merged from manifests/, the Chrome id derived from the key, icons drawn here), and has the host's own
// installer write dist/native-host/{chromium,firefox}/ (`micoff-host install --target-dir`).
// Options: --watch, --browser=chrome|firefox (default both), --host-path=/abs/micoff-host
// (default $MICOFF_HOST_PATH or <repo>/target/release/micoff-host). Output is deterministic.
// Each step: docs/design/packaging.md#build-script.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { deflateSync } from 'node:zlib';
import * as esbuild from 'esbuild';

const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const SRC = join(ROOT, 'extension/src');
const DIST = join(ROOT, 'dist');
const BROWSERS = ['chrome', 'firefox'];
const ICON_SIZES = [16, 32, 48, 128];
// Minimum versions: Chrome 116 (MAIN-world content scripts, module service worker); Firefox 140
// ("world": "MAIN" needs 128; gecko.data_collection_permissions, which web-ext lint requires, needs 140).
const TARGETS = { chrome: ['chrome116'], firefox: ['firefox140'] };

/** Objects merge recursively; arrays and scalars in the overlay replace; `null` deletes the key. */
export function deepMerge(base, overlay) {
  if (!isPlainObject(base) || !isPlainObject(overlay)) return structuredClone(overlay);
  const out = structuredClone(base);
  for (const [k, v] of Object.entries(overlay)) {
    if (v === null) delete out[k];
    else out[k] = k in out ? deepMerge(out[k], v) : structuredClone(v);
  }
  return out;
}

function isPlainObject(v) {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** Chrome's id for an unpacked extension with a "key": sha256 of the DER public key, 32 hex digits, 0-f -> a-p. */
export function chromeIdFromKey(keyBase64) {
  const hex = createHash('sha256').update(Buffer.from(keyBase64, 'base64')).digest('hex').slice(0, 32);
  return [...hex].map((c) => String.fromCharCode(97 + Number.parseInt(c, 16))).join('');
}

// ---- PNG icons ---------------------------------------------------------------------------------------

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

export function crc32(buf) {
  let c = 0xffffffff;
  for (const b of buf) c = CRC_TABLE[(c ^ b) & 0xff] ^ (c >>> 8);
  return (c ^ 0xffffffff) >>> 0;
}

function pngChunk(type, data) {
  const len = Buffer.alloc(4);
  len.writeUInt32BE(data.length);
  const td = Buffer.concat([Buffer.from(type, 'ascii'), data]);
  const crc = Buffer.alloc(4);
  crc.writeUInt32BE(crc32(td));
  return Buffer.concat([len, td, crc]);
}

/** RGBA pixels (size*size*4) -> PNG bytes. */
export function encodePng(size, rgba) {
  const ihdr = Buffer.alloc(13);
  ihdr.writeUInt32BE(size, 0);
  ihdr.writeUInt32BE(size, 4);
  ihdr[8] = 8; // bit depth
  ihdr[9] = 6; // RGBA
  const raw = Buffer.alloc(size * (size * 4 + 1));
  for (let y = 0; y < size; y++) {
    raw[y * (size * 4 + 1)] = 0; // filter: none
    rgba.copy(raw, y * (size * 4 + 1) + 1, y * size * 4, (y + 1) * size * 4);
  }
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    pngChunk('IHDR', ihdr),
    pngChunk('IDAT', deflateSync(raw, { level: 9 })),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/** The micoff icon: a microphone with a slash through it, on a dark disc. Coordinates in 0..1. */
function iconShape(x, y) {
  const dist = (ax, ay) => Math.hypot(x - ax, y - ay);
  const segDist = (ax, ay, bx, by) => {
    const t = Math.max(
      0,
      Math.min(1, ((x - ax) * (bx - ax) + (y - ay) * (by - ay)) / ((bx - ax) ** 2 + (by - ay) ** 2)),
    );
    return dist(ax + t * (bx - ax), ay + t * (by - ay));
  };
  if (dist(0.5, 0.5) > 0.49) return null;
  if (segDist(0.24, 0.24, 0.76, 0.76) < 0.05) return [239, 68, 68]; // slash
  const capsule = segDist(0.5, 0.3, 0.5, 0.5) < 0.11;
  const cup = Math.abs(dist(0.5, 0.48) - 0.19) < 0.035 && y > 0.48;
  const stem = Math.abs(x - 0.5) < 0.035 && y > 0.66 && y < 0.79;
  const base = Math.abs(y - 0.79) < 0.035 && Math.abs(x - 0.5) < 0.13;
  if (capsule || cup || stem || base) return [248, 250, 252];
  return [30, 41, 59];
}

function drawIcon(size) {
  const ss = 4; // 4x4 supersampling for anti-aliased edges
  const px = Buffer.alloc(size * size * 4);
  for (let y = 0; y < size; y++) {
    for (let x = 0; x < size; x++) {
      let r = 0;
      let g = 0;
      let b = 0;
      let a = 0;
      for (let sy = 0; sy < ss; sy++) {
        for (let sx = 0; sx < ss; sx++) {
          const c = iconShape((x + (sx + 0.5) / ss) / size, (y + (sy + 0.5) / ss) / size);
          if (!c) continue;
          r += c[0];
          g += c[1];
          b += c[2];
          a++;
        }
      }
      const i = (y * size + x) * 4;
      if (a > 0) {
        px[i] = Math.round(r / a);
        px[i + 1] = Math.round(g / a);
        px[i + 2] = Math.round(b / a);
        px[i + 3] = Math.round((255 * a) / (ss * ss));
      }
    }
  }
  return encodePng(size, px);
}

// ---- build -------------------------------------------------------------------------------------------

function readJson(path) {
  return JSON.parse(readFileSync(path, 'utf8'));
}

function writeJson(path, value) {
  writeFileSync(path, `${JSON.stringify(value, null, 2)}\n`);
}

function parseArgs(argv) {
  const opts = { watch: false, browsers: BROWSERS, hostPath: undefined };
  for (const a of argv) {
    if (a === '--watch') opts.watch = true;
    else if (a.startsWith('--browser=')) opts.browsers = a.slice('--browser='.length).split(',');
    else if (a.startsWith('--host-path=')) opts.hostPath = a.slice('--host-path='.length);
    else throw new Error(`unknown argument ${a} (use --watch, --browser=chrome|firefox, --host-path=PATH)`);
  }
  for (const b of opts.browsers) if (!BROWSERS.includes(b)) throw new Error(`unknown browser ${b}`);
  opts.hostPath = resolve(
    opts.hostPath ?? process.env.MICOFF_HOST_PATH ?? join(ROOT, 'target/release/micoff-host'),
  );
  return opts;
}

export function buildManifest(browser) {
  const pkg = readJson(join(ROOT, 'package.json'));
  const merged = deepMerge(
    readJson(join(ROOT, 'manifests/base.json')),
    readJson(join(ROOT, `manifests/${browser}.json`)),
  );
  return { ...merged, version: pkg.version };
}

// Each entry: [output name, source, format]. Content scripts are classic scripts, so IIFE; the
// background is an ES module in both browsers ("type": "module").
const ENTRIES = [
  ['background', 'background/index.ts', 'esm'],
  ['page', 'page/index.ts', 'iife'],
  ['content', 'content/index.ts', 'iife'],
  ['popup', 'popup/index.ts', 'iife'],
  ['options', 'options/index.ts', 'iife'],
];

const STATIC = [
  ['popup/popup.html', 'popup.html'],
  ['popup/popup.css', 'popup.css'],
  ['options/options.html', 'options.html'],
  ['options/options.css', 'options.css'],
  ['shared/ui.css', 'ui.css'],
  ['managed_schema.json', 'managed_schema.json'],
];

function writeStatic(browser, outDir, manifest) {
  for (const [from, to] of STATIC) cpSync(join(SRC, from), join(outDir, to));
  mkdirSync(join(outDir, 'icons'), { recursive: true });
  for (const size of ICON_SIZES) writeFileSync(join(outDir, `icons/icon-${size}.png`), ICONS.get(size));
  writeJson(join(outDir, 'manifest.json'), manifest);
  if (browser === 'chrome')
    writeFileSync(join(outDir, 'extension-id.txt'), `${chromeIdFromKey(manifest.key)}\n`);
}

function esbuildOptions(browser, outDir, onEnd) {
  return ENTRIES.map(([name, src, format]) => ({
    entryPoints: { [name]: join(SRC, src) },
    outdir: outDir,
    bundle: true,
    format,
    target: TARGETS[browser],
    platform: 'browser',
    define: { __BROWSER__: JSON.stringify(browser) },
    sourcemap: 'linked',
    sourcesContent: false,
    legalComments: 'none',
    logLevel: 'warning',
    plugins: onEnd ? [{ name: 'static', setup: (b) => b.onEnd(onEnd) }] : [],
  }));
}

/** The extension ids this build's manifests give: the ones a host manifest must allow. */
export function extensionIds() {
  const chromeId = chromeIdFromKey(buildManifest('chrome').key);
  const firefoxId = buildManifest('firefox').browser_specific_settings?.gecko?.id;
  if (!firefoxId) throw new Error('manifests/firefox.json: browser_specific_settings.gecko.id missing');
  return { chromeId, firefoxId };
}

/**
 * The native host manifests as `hostBin`'s own installer writes them (`micoff-host install --browser
 * <flavor> --target-dir <root>/<flavor> --host-path <hostBin>`, or `--packaged-host-path
 * <pathInManifest>` for a package), the one writer of that file:
 * `{ chromium, firefox }`, the path of each. Throws when the installer fails, writes other than one
 * file, or allows other extension ids than this build's (a host binary built from other manifests).
 * `pathInManifest` is where the browser will find the host: `hostBin` itself for a build, the
 * installed path for a package.
 */
export function writeHostManifests({ hostBin, root, pathInManifest = hostBin }) {
  const { chromeId, firefoxId } = extensionIds();
  const want = { chromium: `chrome-extension://${chromeId}/`, firefox: firefoxId };
  const written = {};
  // The installer checks the host it is given; a package's manifests name where the package puts
  // it (--packaged-host-path). micoff's record of what it wrote goes to a folder of this run, not
  // into the ~/.local/state of whoever builds.
  const hostArgs =
    pathInManifest === hostBin ? ['--host-path', hostBin] : ['--packaged-host-path', pathInManifest];
  const state = mkdtempSync(join(tmpdir(), 'micoff-build-state-'));
  try {
    for (const flavor of ['chromium', 'firefox']) {
      const dir = join(root, flavor);
      const args = ['install', '--browser', flavor, '--target-dir', dir, ...hostArgs];
      try {
        execFileSync(hostBin, args, {
          stdio: ['ignore', 'pipe', 'pipe'],
          env: { ...process.env, XDG_STATE_HOME: state },
        });
      } catch (e) {
        throw new Error(`${hostBin} ${args.join(' ')} failed: ${e.stderr || e.stdout || e.message}`);
      }
      written[flavor] = checkedManifest(dir, flavor, want[flavor], hostBin);
    }
  } finally {
    rmSync(state, { recursive: true, force: true });
  }
  return written;
}

/** The one manifest `micoff-host install` wrote into `dir`, allowing `want` alone; throws otherwise. */
function checkedManifest(dir, flavor, want, hostBin) {
  const files = existsSync(dir) ? readdirSync(dir) : [];
  if (files.length !== 1 || !files[0])
    throw new Error(`micoff-host install wrote ${files.length} files into ${dir}`);
  const manifest = readJson(join(dir, files[0]));
  const allowed = flavor === 'chromium' ? manifest.allowed_origins : manifest.allowed_extensions;
  if (!Array.isArray(allowed) || allowed.length !== 1 || allowed[0] !== want) {
    throw new Error(
      `${join(dir, files[0])} allows ${JSON.stringify(allowed)}, not ${want} alone: ${hostBin} was built from other manifests (cargo build --release -p micoff-host)`,
    );
  }
  return join(dir, files[0]);
}

/**
 * dist/native-host/<flavor>/ through `micoff-host install --target-dir`, pointing at `hostPath`.
 * Returns the folders written, or null when the host is not built yet.
 */
function writeNativeHostManifests(hostPath) {
  const root = join(DIST, 'native-host');
  rmSync(root, { recursive: true, force: true });
  if (!existsSync(hostPath)) return null;
  return Object.values(writeHostManifests({ hostBin: hostPath, root })).map((f) => dirname(f));
}

const ICONS = new Map(ICON_SIZES.map((s) => [s, drawIcon(s)]));

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  const started = Date.now();
  const chromeManifest = buildManifest('chrome');
  const firefoxManifest = buildManifest('firefox');
  const { chromeId } = extensionIds();

  const contexts = [];
  for (const browser of opts.browsers) {
    const outDir = join(DIST, browser);
    rmSync(outDir, { recursive: true, force: true });
    mkdirSync(outDir, { recursive: true });
    const manifest = browser === 'chrome' ? chromeManifest : firefoxManifest;
    if (opts.watch) {
      // Re-read manifests and static files after every rebuild, so edits to them show up too.
      const onEnd = () => writeStatic(browser, outDir, buildManifest(browser));
      for (const o of esbuildOptions(browser, outDir, onEnd)) {
        const ctx = await esbuild.context(o);
        await ctx.watch();
        contexts.push(ctx);
      }
    } else {
      await Promise.all(esbuildOptions(browser, outDir).map((o) => esbuild.build(o)));
      writeStatic(browser, outDir, manifest);
    }
  }
  const hostDirs = writeNativeHostManifests(opts.hostPath);
  const hostLine = hostDirs
    ? `native host manifests (micoff-host install): ${hostDirs.map((d) => `${relative(ROOT, d)}/`).join(', ')} -> ${opts.hostPath}`
    : `native host manifests: not written, ${opts.hostPath} is not built yet (cargo build --release -p micoff-host)`;
  console.log(
    [
      `built ${opts.browsers.map((b) => `dist/${b}`).join(', ')} in ${Date.now() - started} ms`,
      `chrome extension id: ${chromeId}`,
      hostLine,
    ].join('\n'),
  );
  if (opts.watch) console.log('watching for changes (Ctrl-C to stop)');
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((err) => {
    console.error(`build failed: ${err?.message ?? err}`);
    process.exit(1);
  });
}
