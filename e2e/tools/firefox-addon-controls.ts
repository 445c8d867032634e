// What each line `micoff-host install --firefox-xpi` writes into a profile's user.js does in Debian's
// Firefox ESR: one line taken out (or the profile set up otherwise) per case, Firefox started and
// closed, its extensions.json read. The table in docs/design/firefox-install.md ("Measured") is this
// tool's output. Not part of the suite:
//   npm run build && cargo build --release -p micoff-host && npm run package
//   node --import tsx e2e/tools/firefox-addon-controls.ts [case ...]      (default: every case)
import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser as BrowserKind, createProfile } from '@puppeteer/browsers';
import { firefoxExtensionId, nativeHostOf, startFirefoxOnProfile } from '../rig/firefox.ts';
import { requireHost } from '../rig/host.ts';
import { FIREFOX_EXTENSION_DIR, HOST_BINARY, ROOT } from '../rig/paths.ts';
import { waitFor } from '../rig/proc.ts';

const id = firefoxExtensionId();
const version = JSON.parse(readFileSync(join(FIREFOX_EXTENSION_DIR, 'manifest.json'), 'utf8')).version;
const xpi = join(ROOT, 'dist', `micoff-${version}.xpi`);
const host = requireHost(HOST_BINARY);

interface Profile {
  home: string;
  dir: string;
}

/** A fresh profile listed in a private HOME's profiles.ini, with the BiDi prefs as the user's lines
 * (without createProfile's add-on scopes, and the remote agent's recommended prefs off). */
async function freshProfile(): Promise<Profile> {
  const home = mkdtempSync(join(tmpdir(), 'micoff-controls-'));
  const dir = join(home, '.mozilla', 'firefox', 'p');
  await createProfile(BrowserKind.FIREFOX, { path: dir, preferences: { 'remote.prefs.recommended': false } });
  dropLines(dir, /"extensions\.(autoDisableScopes|enabledScopes)"/);
  writeFileSync(
    join(home, '.mozilla', 'firefox', 'profiles.ini'),
    '[Profile0]\nName=p\nIsRelative=1\nPath=p\n',
  );
  return { home, dir };
}

function installer(p: Profile, ...args: string[]): string {
  return execFileSync(host, ['install', '--browser', 'firefox', ...args], {
    env: { ...process.env, HOME: p.home },
  }).toString();
}

function dropLines(dir: string, re: RegExp, file = 'user.js') {
  const path = join(dir, file);
  const kept = readFileSync(path, 'utf8')
    .split('\n')
    .filter((l) => !re.test(l));
  writeFileSync(path, kept.join('\n'));
}

/** Starts Firefox on the profile and closes it once its window is up and add-ons had a moment. */
async function startAndClose(p: Profile): Promise<void> {
  const ff = await startFirefoxOnProfile(p.dir, { ...process.env, HOME: p.home });
  const page = await ff.browser.newPage();
  await page.goto('about:blank');
  await ff.stop();
}

/** What Firefox recorded about micoff (extensions.json), and whether micoff's copy is still there. */
function outcome(p: Profile): string {
  const db = join(p.dir, 'extensions.json');
  const addons: Record<string, unknown>[] = existsSync(db)
    ? (JSON.parse(readFileSync(db, 'utf8')).addons ?? [])
    : [];
  const a = addons.find((x) => x.id === id);
  const copy = existsSync(join(p.dir, 'extensions', `${id}.xpi`)) ? 'copy present' : 'copy gone';
  return a
    ? `installed: active ${a.active}, userDisabled ${a.userDisabled}, seen ${a.seen}; ${copy}`
    : `not installed; ${copy}`;
}

const cases: Record<string, (p: Profile) => Promise<string>> = {
  async 'as installed'(p) {
    installer(p, '--firefox-xpi', xpi);
    await startAndClose(p);
    return outcome(p);
  },
  async 'without the autoDisableScopes line'(p) {
    installer(p, '--firefox-xpi', xpi);
    dropLines(p.dir, /autoDisableScopes/);
    await startAndClose(p);
    return outcome(p);
  },
  async 'without the signatures line'(p) {
    installer(p, '--firefox-xpi', xpi);
    dropLines(p.dir, /xpinstall\.signatures/);
    await startAndClose(p);
    return outcome(p);
  },
  async 'profile run before, without the startupScanScopes line'(p) {
    await startAndClose(p);
    installer(p, '--firefox-xpi', xpi);
    dropLines(p.dir, /startupScanScopes/);
    await startAndClose(p);
    return outcome(p);
  },
  async 'profile run before: ms from launch until micoff-host runs, with / without the startupScanScopes line'(
    p,
  ) {
    const runs: Record<string, number[]> = { with: [], without: [] };
    for (let round = 0; round < 3; round++) {
      for (const variant of ['with', 'without'] as const) {
        const q = await freshProfile();
        try {
          await startAndClose(q);
          installer(q, '--firefox-xpi', xpi);
          if (variant === 'without') dropLines(q.dir, /startupScanScopes/);
          const t = Date.now();
          const ff = await startFirefoxOnProfile(q.dir, { ...process.env, HOME: q.home });
          const started = await waitFor(
            'micoff-host started by Firefox',
            async () => nativeHostOf(ff.pid, id),
            {
              timeoutMs: 20_000,
            },
          ).then(
            () => Date.now() - t,
            () => Number.NaN, // not within 20 s: not in this session
          );
          runs[variant]?.push(started);
          await ff.stop();
        } finally {
          rmSync(q.home, { recursive: true, force: true });
        }
      }
    }
    void p;
    const show = (xs: number[] = []) => xs.map((x) => (Number.isNaN(x) ? 'not within 20 s' : x)).join('/');
    return `with ${show(runs.with)} ms, without ${show(runs.without)} ms`;
  },
  async 'uninstalled, next start'(p) {
    installer(p, '--firefox-xpi', xpi);
    await startAndClose(p);
    const before = outcome(p);
    installer(p, '--uninstall', '--firefox-xpi');
    await startAndClose(p);
    return `${before} -> ${outcome(p)}`;
  },
  async 'user.js lines removed, prefs.js left as Firefox wrote it, next start'(p) {
    installer(p, '--firefox-xpi', xpi, '--firefox-release');
    await startAndClose(p);
    dropLines(p.dir, /micoff|xpinstall|Scopes|off_while_disabled/);
    await startAndClose(p);
    const prefs = readFileSync(join(p.dir, 'prefs.js'), 'utf8');
    const left = prefs.split('\n').filter((l) => /xpinstall|Scopes|off_while_disabled/.test(l));
    return `prefs.js still sets: ${left.join(' ') || 'nothing'}`;
  },
};

const wanted = process.argv.slice(2);
for (const [name, run] of Object.entries(cases)) {
  if (wanted.length && !wanted.includes(name)) continue;
  const p = await freshProfile();
  try {
    console.log(`${name}: ${await run(p)}`);
  } finally {
    rmSync(p.home, { recursive: true, force: true });
  }
}
