// One `micoff-host uninstall` on the profile Firefox ESR made on a fresh HOME puts it back as it was: everything micoff
// installs for Firefox goes in, Firefox takes it up, one uninstall runs, and after Firefox's next start
// user.js, prefs.js, the files and the add-on database are the user's again.
// Steps: docs/design/uninstall.md#firefox-fresh-uninstall-spec.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { HOST_NAME } from '../../extension/src/shared/protocol.ts';
import {
  type FirefoxOnProfile,
  firefoxExtensionId,
  firefoxMissing,
  startFirefoxOnProfile,
} from '../rig/firefox.ts';
import { addonRecord, firefoxMadeProfile, MICOFF_PREFS, packagedXpi } from '../rig/firefox-install.ts';
import { expect, test } from '../rig/fixtures.ts';
import { requireHost } from '../rig/host.ts';
import { need } from '../rig/needs.ts';
import { HOST_BINARY } from '../rig/paths.ts';
import { run, waitFor } from '../rig/proc.ts';

/** The `user_pref` lines of prefs.js for micoff's prefs, by name (absent: no line). */
function micoffPrefLines(profile: string): Record<string, string | undefined> {
  const file = join(profile, 'prefs.js');
  const text = existsSync(file) ? readFileSync(file, 'utf8') : '';
  const out: Record<string, string | undefined> = {};
  for (const name of MICOFF_PREFS) {
    out[name] = text.split('\n').find((l) => l.startsWith(`user_pref("${name}",`));
  }
  return out;
}

/** The folders under `dir` (relative), sorted: Firefox's own data stores aside, whose content is
 * Firefox's to keep (caches, telemetry, crash reports, session and storage folders it fills as it
 * runs, in its profiles under `root` and beside them), and libpulse's `~/.config/pulse` (its runtime
 * link, made by the audio library of whatever connects to the audio server: Firefox, or micoff-host
 * once Firefox started it for the add-on). */
function folders(dir: string, root: string): string[] {
  const firefoxOwn =
    /^(cache2|startupCache|datareporting|saved-telemetry-pings|crashes|minidumps|sessionstore-backups|security_state|shader-cache|storage|browser-extension-data|gmp-[^/]*|settings|thumbnails|weave)(\/|$)/;
  const out: string[] = [];
  const walk = (d: string) => {
    for (const name of readdirSync(d)) {
      const p = join(d, name);
      if (!statSync(p, { throwIfNoEntry: false })?.isDirectory()) continue;
      const rel = relative(dir, p);
      if (rel === '.config/pulse' || rel === '.cache' || /(^|\/)(Crash Reports|Pending Pings)$/.test(rel))
        continue;
      const inRoot = relative(root, p).split('/');
      const inProfile = inRoot.slice(1).join('/'); // below <root>/<profile>/
      if (inRoot[0] !== '..' && inProfile && firefoxOwn.test(inProfile)) continue;
      out.push(rel);
      walk(p);
    }
  };
  walk(dir);
  return out.sort();
}

test('a fresh Firefox profile: everything micoff installs for Firefox, taken up, then one `micoff-host uninstall`: prefs (signature checking on) and folders as before', async ({
  audioServer,
}) => {
  test.skip(audioServer !== 'pulseaudio', 'the audio server plays no part: run once');
  need(firefoxMissing());
  test.setTimeout(120_000);
  const home = mkdtempSync(join(tmpdir(), 'micoff-ffuninstall-'));
  // The user's environment for micoff-host: every folder it writes in under this HOME.
  const userEnv = {
    PATH: process.env.PATH,
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
    XDG_STATE_HOME: join(home, '.local', 'state'),
  };
  const firefoxEnv: NodeJS.ProcessEnv = { ...process.env, ...userEnv };
  let profile = '';
  const id = firefoxExtensionId();
  const host = requireHost(HOST_BINARY);
  let ff: FirefoxOnProfile | undefined;
  const runFirefox = async (check?: (ff: FirefoxOnProfile) => Promise<void>) => {
    ff = await startFirefoxOnProfile(profile, firefoxEnv);
    await check?.(ff);
    await ff.stop();
    ff = undefined;
  };
  try {
    const xpi = await packagedXpi(join(home, 'package'));
    // The profile Firefox ESR makes on its first run on the fresh HOME (under $XDG_CONFIG_HOME).
    const made = await firefoxMadeProfile(firefoxEnv);
    profile = made.profile;
    const { userJs } = made;
    // "Before": the fresh profile after its first run of its own.
    await runFirefox();
    const userJsBefore = readFileSync(userJs);
    const prefsBefore = micoffPrefLines(profile);
    // The package folder is the test's, not the user's: out of the comparison.
    const foldersBefore = folders(home, made.root).filter((f) => !f.startsWith('package'));
    expect(prefsBefore['xpinstall.signatures.required']).toBeUndefined();

    const installed = await run(
      host,
      [
        'install',
        '--browser',
        'firefox',
        '--firefox-xpi',
        xpi,
        '--firefox-release',
        '--release-delay-ms',
        '1000',
      ],
      { env: userEnv, timeoutMs: 15_000 },
    );
    expect(installed.code, installed.stdout + installed.stderr).toBe(0);
    expect(installed.stdout).toContain('xpinstall.signatures.required = false turns off');
    const manifest = join(home, '.mozilla', 'native-messaging-hosts', `${HOST_NAME}.json`);
    const copy = join(profile, 'extensions', `${id}.xpi`);
    expect(existsSync(manifest) && existsSync(copy)).toBe(true);

    // Firefox takes it up: the add-on active, micoff's values copied into prefs.js at its exit.
    await runFirefox(async () => {
      await waitFor('micoff active in Firefox’s add-on database', async () =>
        addonRecord(profile, id)?.active ? true : null,
      );
    });
    const taken = micoffPrefLines(profile);
    expect(taken['xpinstall.signatures.required']).toBe('user_pref("xpinstall.signatures.required", false);');
    expect(taken['media.getusermedia.microphone.off_while_disabled.enabled']).toContain('true');

    // ONE uninstall.
    const removed = await run(host, ['uninstall'], { env: userEnv, timeoutMs: 15_000 });
    expect(removed.code, removed.stdout + removed.stderr).toBe(0);
    expect(removed.stdout).toContain('everything micoff wrote was removed or put back');

    // Firefox's next start drops the add-on whose copy is gone.
    await runFirefox();
    expect(addonRecord(profile, id)).toBeUndefined();
    expect(readFileSync(userJs).equals(userJsBefore)).toBe(true);
    expect(micoffPrefLines(profile)).toEqual(prefsBefore);
    expect(existsSync(manifest) || existsSync(copy)).toBe(false);
    expect(existsSync(join(home, '.local'))).toBe(false);
    expect(folders(home, made.root).filter((f) => !f.startsWith('package'))).toEqual(foldersBefore);
  } finally {
    await ff?.stop().catch(() => {});
    rmSync(home, { recursive: true, force: true });
  }
});
