// `micoff-host install --firefox-xpi --firefox-release` on Debian's Firefox ESR as a user does it: the
// profile Firefox made on a fresh HOME gets the manifest, the add-on copy and the user.js block; Firefox started as a user
// starts it runs micoff and releases the mic; `--uninstall` leaves the profile as it was.
// Steps, and why Firefox is not started by puppeteer's launcher:
// docs/design/firefox-install.md#firefox-release-install-spec.
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
  lines,
  muteAndWatchRelease,
  packagedXpi,
} from '../rig/firefox-install.ts';
import { expect, test } from '../rig/fixtures.ts';
import { requireHost } from '../rig/host.ts';
import { need } from '../rig/needs.ts';
import { HOST_BINARY } from '../rig/paths.ts';
import { run } from '../rig/proc.ts';

const DELAY_MS = 300;
const PREF = 'media.getusermedia.microphone.off_while_disabled';
/** What micoff's block sets for the add-on (besides the release prefs). */
const ADDON_PREFS =
  /xpinstall\.signatures\.required|extensions\.autoDisableScopes|extensions\.startupScanScopes/;

test('install --firefox-xpi --firefox-release: Firefox ESR started normally has micoff reaching the host, across a restart, the pref releases the mic; --uninstall leaves neither and keeps the user’s lines', async ({
  rig,
  pages,
}) => {
  need(firefoxMissing());
  test.setTimeout(180_000);
  const home = mkdtempSync(join(tmpdir(), 'micoff-ffinstall-'));
  const userEnv = freshUserEnv(process.env, home);
  const firefoxEnv = freshUserEnv(rig.clientEnv, home);
  let profile = '';
  const id = firefoxExtensionId();
  const host = requireHost(HOST_BINARY);
  const starts: number[] = [];
  const stops: number[] = [];
  let ff: FirefoxOnProfile | undefined;
  const start = async () => {
    ff = await startFirefoxOnProfile(profile, firefoxEnv);
    starts.push(ff.startedMs);
    return ff;
  };
  const stop = async () => {
    const running = ff;
    ff = undefined;
    if (running) stops.push(await running.stop());
  };
  try {
    // The packaged xpi, as `npm run package` writes it (here into a folder of the test's own), and the
    // profile Firefox ESR makes on its first run on the fresh HOME (under ~/.config/mozilla/firefox).
    const xpi = await packagedXpi(join(home, 'package'));
    const made = await firefoxMadeProfile(firefoxEnv);
    profile = made.profile;
    const { userJs, usersOwn } = made;
    expect(usersOwn).not.toMatch(ADDON_PREFS);

    const installArgs = ['install', '--browser', 'firefox', '--firefox-release', '--firefox-xpi'];
    const installed = await run(host, [...installArgs, xpi, '--release-delay-ms', String(DELAY_MS)], {
      env: userEnv,
      timeoutMs: 15_000,
    });
    expect(installed.code, installed.stdout + installed.stderr).toBe(0);
    expect(existsSync(join(home, '.mozilla', 'native-messaging-hosts', `${HOST_NAME}.json`))).toBe(true);
    const copy = join(profile, 'extensions', `${id}.xpi`);
    expect(readFileSync(copy).equals(readFileSync(xpi))).toBe(true);
    const withBlock = readFileSync(userJs, 'utf8');
    expect(lines(withBlock).slice(0, lines(usersOwn).length)).toEqual(lines(usersOwn));
    expect(withBlock).toContain(`user_pref("${PREF}.enabled", true);`);
    expect(withBlock).toContain(`user_pref("${PREF}.delay_ms", ${DELAY_MS});`);
    // Debian's ESR auto-disables add-ons dropped into the profile and user scopes (3): the profile
    // bit goes; the profile folder is scanned at every start; unsigned add-ons are allowed.
    expect(withBlock).toContain('user_pref("extensions.autoDisableScopes", 2);');
    expect(withBlock).toContain('user_pref("extensions.startupScanScopes", 1);');
    expect(withBlock).toContain('user_pref("xpinstall.signatures.required", false);');

    // First start: installed by Firefox from the profile, enabled, reaching the host.
    const first = (await expectReachingTheHost(await start(), id)).pill;
    await stop();
    expect(addonRecord(profile, id)).toMatchObject({
      active: true,
      userDisabled: false,
      location: 'app-profile',
    });

    // Second start, same profile: still installed and reaching the host; Firefox's release is on.
    const again = await start();
    const second = (await expectReachingTheHost(again, id)).pill;
    const releasedMs = await muteAndWatchRelease(again, rig, pages, DELAY_MS, DELAY_MS + 5000);
    expect(
      releasedMs,
      'Firefox’s record stream gone after mute (the pref micoff wrote is in effect)',
    ).not.toBeNull();
    await stop();
    expect(addonRecord(profile, id)).toMatchObject({ active: true });

    // Uninstall (Firefox closed: the installer leaves a profile in use alone).
    const removed = await run(host, [...installArgs, '--uninstall'], { env: userEnv, timeoutMs: 15_000 });
    expect(removed.code, removed.stdout + removed.stderr).toBe(0);
    expect(lines(readFileSync(userJs, 'utf8'))).toEqual(lines(usersOwn));
    expect(existsSync(copy)).toBe(false);

    // Next start: Firefox drops micoff; afterwards its records hold neither the add-on nor a pref.
    await start();
    await stop();
    expect(addonRecord(profile, id)).toBeUndefined();
    const prefs = readFileSync(join(profile, 'prefs.js'), 'utf8');
    expect(prefs).not.toContain(PREF);
    expect(prefs).not.toMatch(ADDON_PREFS);
    expect(lines(readFileSync(userJs, 'utf8'))).toEqual(lines(usersOwn));
    console.log(
      `firefox-install: ${first}; after restart ${second}; record stream gone ${releasedMs} ms after mute ` +
        `(delay ${DELAY_MS} ms); Firefox start ${starts.join('/')} ms, stop ${stops.join('/')} ms`,
    );
  } finally {
    await stop().catch(() => {});
    rmSync(home, { recursive: true, force: true });
  }
});
