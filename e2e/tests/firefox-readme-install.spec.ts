// The README's Firefox install, word for word, on a fresh HOME whose profile Firefox made itself: the
// `firefox` block run by a shell (micoff-host on PATH, the working folder holding dist/ as
// `npm run package` writes it), Firefox ESR started on that profile reaches the installed host and
// releases the mic on mute, reacquires it on unmute; the `uninstall` block's first line puts back
// everything micoff touched. Steps: docs/design/firefox-install.md#firefox-readme-install-spec.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { HOST_NAME } from '../../extension/src/shared/protocol.ts';
import {
  type FirefoxOnProfile,
  firefoxExtensionId,
  firefoxMissing,
  startFirefoxOnProfile,
} from '../rig/firefox.ts';
import {
  addonRecord,
  expectReachingTheHost,
  firefoxMadeProfile,
  freshUserEnv,
  MICOFF_PREFS,
  muteReleasesUnmuteReacquires,
  packagedXpi,
} from '../rig/firefox-install.ts';
import { expect, test } from '../rig/fixtures.ts';
import { requireHost } from '../rig/host.ts';
import { need } from '../rig/needs.ts';
import { HOST_BINARY, ROOT } from '../rig/paths.ts';
import { run } from '../rig/proc.ts';
import { readmeBlock } from '../rig/readme.ts';

/** How long the release (after micoff's default delay) and the reacquire may take at the server. */
const WITHIN_MS = 10_000;

/** The files under `dir` (relative, sorted), `dir` absent: none. */
function filesUnder(dir: string): string[] {
  if (!existsSync(dir)) return [];
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => !e.isDirectory())
    .map((e) => relative(dir, join(e.parentPath, e.name)))
    .sort();
}

/** What micoff's install can touch in `home`, as text to compare: per profile its user.js, micoff's
 * prefs in prefs.js, its extensions/ folder; the home's ~/.mozilla (the manifest's folder) and
 * micoff's record folder. Firefox's own files (caches, telemetry, the session) are not in it. */
function touchable(home: string, profiles: string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const p of profiles) {
    const read = (f: string) => (existsSync(join(p, f)) ? readFileSync(join(p, f), 'utf8') : null);
    const prefs = read('prefs.js') ?? '';
    out[relative(home, p)] = {
      userJs: read('user.js'),
      prefs: MICOFF_PREFS.map(
        (n) => prefs.split('\n').find((l) => l.startsWith(`user_pref("${n}",`)) ?? null,
      ),
      extensions: filesUnder(join(p, 'extensions')),
    };
  }
  out['.mozilla'] = existsSync(join(home, '.mozilla')) ? filesUnder(join(home, '.mozilla')) : 'absent';
  out['.local/state/micoff'] = filesUnder(join(home, '.local', 'state', 'micoff'));
  return out;
}

test('the README’s Firefox install, literally, on a fresh HOME with the profile Firefox made: the installed host reached, mute releases and unmute reacquires the mic; `micoff-host uninstall` puts back what micoff touched', async ({
  rig,
  pages,
  audioServer,
}) => {
  test.skip(audioServer !== 'pulseaudio', 'the install is the same on either server: run once');
  need(firefoxMissing());
  test.setTimeout(120_000);
  const host = requireHost(HOST_BINARY);
  const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version as string;
  const [install, ...more] = readmeBlock('firefox');
  const uninstall = readmeBlock('uninstall')[0];
  // The README's commands name this checkout's version: a release that bumps package.json and
  // forgets the README fails here.
  expect(more, 'the README’s firefox block is one command').toEqual([]);
  expect(install).toContain(`dist/micoff-${version}.xpi`);
  expect(uninstall).toBe('micoff-host uninstall');

  const tmp = mkdtempSync(join(tmpdir(), 'micoff-ffreadme-'));
  const home = join(tmp, 'home');
  const work = join(tmp, 'checkout');
  const bin = join(tmp, 'bin');
  mkdirSync(home);
  mkdirSync(bin);
  // micoff-host on PATH, as the package or `install -Dm755` puts it there.
  symlinkSync(host, join(bin, 'micoff-host'));
  const userEnv = { ...freshUserEnv(rig.clientEnv, home), PATH: `${bin}:${process.env.PATH ?? ''}` };
  const id = firefoxExtensionId();
  let ff: FirefoxOnProfile | undefined;
  try {
    // dist/micoff-<version>.xpi, as `npm run package` writes it, in the folder the commands run in.
    const xpi = await packagedXpi(join(work, 'dist'));
    expect(relative(work, xpi)).toBe(`dist/micoff-${version}.xpi`);

    // Firefox makes its own profile on the fresh HOME: Firefox ESR 147+ puts it under ~/.config.
    const made = await firefoxMadeProfile(userEnv);
    expect(made.root).toBe(join(home, '.config', 'mozilla', 'firefox'));
    expect(existsSync(join(home, '.mozilla'))).toBe(false);
    const before = touchable(home, made.all);

    const installed = await run('sh', ['-c', install ?? ''], { env: userEnv, cwd: work, timeoutMs: 15_000 });
    expect(installed.code, installed.stdout + installed.stderr).toBe(0);
    // The manifest in the one per-user folder Firefox reads; micoff's copy in every profile.
    const manifest = join(home, '.mozilla', 'native-messaging-hosts', `${HOST_NAME}.json`);
    expect(existsSync(manifest)).toBe(true);
    for (const p of made.all) expect(existsSync(join(p, 'extensions', `${id}.xpi`)), p).toBe(true);
    // No legacy profile root made (it would move this Firefox's profiles there).
    expect(existsSync(join(home, '.mozilla', 'firefox'))).toBe(false);

    // Firefox on the profile it made: micoff installed from it, reaching the installed host.
    ff = await startFirefoxOnProfile(made.profile, userEnv);
    const reached = await expectReachingTheHost(ff, id);
    expect(reached.hostArgv).toContain(manifest);
    const { releasedMs, reacquiredMs } = await muteReleasesUnmuteReacquires(ff, rig, pages, 300, WITHIN_MS);
    await ff.stop();
    ff = undefined;
    expect(addonRecord(made.profile, id)).toMatchObject({ active: true, location: 'app-profile' });

    const removed = await run('sh', ['-c', uninstall ?? ''], { env: userEnv, cwd: work, timeoutMs: 15_000 });
    expect(removed.code, removed.stdout + removed.stderr).toBe(0);
    expect(touchable(home, made.all)).toEqual(before);
    console.log(
      `firefox-readme-install: \`${install}\` in ${relative(tmp, work)}; profile ${relative(home, made.profile)}; ` +
        `${reached.pill}; record stream gone ${releasedMs} ms after mute, back ${reacquiredMs} ms after unmute`,
    );
  } finally {
    await ff?.stop().catch(() => {});
    rmSync(tmp, { recursive: true, force: true });
  }
});
