// `micoff-host install --firefox-xpi --firefox-release` on Debian's Firefox ESR, as a user does it:
// a fresh profile listed in the (private) HOME's profiles.ini; the installer, with no --target-dir,
// writes the host manifest into ~/.mozilla/native-messaging-hosts, micoff's copy of the PACKAGED xpi
// (`npm run package`'s) into the profile's extensions/ and its block of prefs into user.js after the
// user's own lines. Firefox started as a user starts it (no temporary add-on, nothing loaded by the
// test) has micoff installed with its background talking to micoff-host, and still has after a
// restart, when Firefox's own release (the pref micoff wrote) frees the microphone at the server
// after a mute. `--uninstall` takes it all out: after the next start neither the add-on nor the pref
// is left in Firefox's own records (extensions.json, prefs.js), and the user's lines are as they were.
//
// Firefox is started without puppeteer's launcher (it rewrites user.js from its own prefs at every
// start, which would hide what the installer wrote; rig/firefox.ts startFirefoxOnProfile). The prefs
// the WebDriver BiDi connection needs are written first (by @puppeteer/browsers' createProfile) and
// play the user's own lines, with the rig's audio settings and the add-on's pinned moz-extension UUID.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Browser as BrowserKind, createProfile } from '@puppeteer/browsers';
import { HOST_NAME } from '../../extension/src/shared/protocol.ts';
import {
  FIREFOX_EXTENSION_UUID,
  type FirefoxOnProfile,
  firefoxExtensionId,
  nativeHostOf,
  openExtensionPage,
  pageWaitFor,
  startFirefoxOnProfile,
} from '../rig/firefox.ts';
import { expect, test } from '../rig/fixtures.ts';
import { requireHost } from '../rig/host.ts';
import { FIREFOX, FIREFOX_EXTENSION_DIR, HOST_BINARY, ROOT } from '../rig/paths.ts';
import { run, waitFor } from '../rig/proc.ts';

const DELAY_MS = 300;
const PREF = 'media.getusermedia.microphone.off_while_disabled';
/** What micoff's block sets for the add-on (besides the release prefs). */
const ADDON_PREFS =
  /xpinstall\.signatures\.required|extensions\.autoDisableScopes|extensions\.startupScanScopes/;

/** A profile's lines, without the empty ones at the end (a final newline is not a line of the user's). */
const lines = (text: string) => text.replace(/\n+$/, '').split('\n');

/** micoff's entry in Firefox's add-on database (`extensions.json`, written by Firefox), if any. */
function addonRecord(profile: string, id: string): Record<string, unknown> | undefined {
  const file = join(profile, 'extensions.json');
  if (!existsSync(file)) return undefined;
  const db = JSON.parse(readFileSync(file, 'utf8')) as { addons?: Record<string, unknown>[] };
  return db.addons?.find((a) => a.id === id);
}

/** The add-on runs and its background talks to micoff-host: Firefox started the host for micoff's id,
 * and the popup shows the version the host answered. */
async function expectReachingTheHost(ff: FirefoxOnProfile, id: string): Promise<string> {
  const hostPid = await waitFor('micoff-host started by Firefox for micoff’s add-on', async () =>
    nativeHostOf(ff.pid, id),
  );
  const popup = await openExtensionPage(ff.browser, `moz-extension://${FIREFOX_EXTENSION_UUID}/popup.html`);
  const pill = await pageWaitFor(popup, 'the popup naming the host it reached', () => {
    const text = document.querySelector('#host-pill')?.textContent ?? '';
    return /^host \d+\.\d+\.\d+/.test(text) ? text : '';
  });
  await popup.close();
  return `${pill} (pid ${hostPid})`;
}

test('install --firefox-xpi --firefox-release: Firefox ESR started normally has micoff reaching the host, across a restart, the pref releases the mic; --uninstall leaves neither and keeps the user’s lines', async ({
  rig,
  pages,
}) => {
  test.skip(!existsSync(FIREFOX), `${FIREFOX} is not installed (Debian's firefox-esr; none on Ubuntu)`);
  test.setTimeout(180_000);
  const home = mkdtempSync(join(tmpdir(), 'micoff-ffinstall-'));
  const userEnv = { ...process.env, HOME: home };
  const firefoxEnv = { ...rig.clientEnv, HOME: home };
  const profile = join(home, '.mozilla', 'firefox', 'test.default-esr');
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
    // The packaged xpi, as `npm run package` writes it (here into a folder of the test's own).
    const out = join(home, 'package');
    const packed = await run(
      process.execPath,
      [join(ROOT, 'scripts', 'package.mjs'), '--no-build', `--out-dir=${out}`],
      { timeoutMs: 60_000 },
    );
    expect(packed.code, packed.stdout + packed.stderr).toBe(0);
    const version = JSON.parse(readFileSync(join(FIREFOX_EXTENSION_DIR, 'manifest.json'), 'utf8')).version;
    const xpi = join(out, `micoff-${version}.xpi`);

    // A fresh profile, never started, listed where Firefox lists a user's profiles.
    await createProfile(BrowserKind.FIREFOX, {
      path: profile,
      preferences: {
        'media.navigator.permission.disabled': true,
        'media.navigator.streams.fake': false,
        'media.cubeb.backend': 'pulse',
        'media.autoplay.default': 0,
        'fission.webContentIsolationStrategy': 0,
        'extensions.webextensions.uuids': JSON.stringify({ [id]: FIREFOX_EXTENSION_UUID }),
        // Firefox's remote agent (there for the test to look in) would otherwise set its
        // "recommended" automation prefs, add-on scopes among them, and leave them in prefs.js.
        'remote.prefs.recommended': false,
      },
    });
    writeFileSync(
      join(home, '.mozilla', 'firefox', 'profiles.ini'),
      '[Profile0]\nName=test\nIsRelative=1\nPath=test.default-esr\nDefault=1\n\n[General]\nStartWithLastProfile=1\nVersion=2\n',
    );
    const userJs = join(profile, 'user.js');
    // createProfile's automation prefs also switch off the auto-disabling of dropped-in add-ons
    // (extensions.autoDisableScopes 0, enabledScopes 5); a user's profile has neither, and taking
    // them up is the installer's job here: they go.
    const usersOwn = readFileSync(userJs, 'utf8')
      .split('\n')
      .filter((l) => !/"extensions\.(autoDisableScopes|enabledScopes)"/.test(l))
      .join('\n');
    writeFileSync(userJs, usersOwn);
    expect(usersOwn).not.toContain(PREF);
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
    const first = await expectReachingTheHost(await start(), id);
    await stop();
    expect(addonRecord(profile, id)).toMatchObject({
      active: true,
      userDisabled: false,
      location: 'app-profile',
    });

    // Second start, same profile: still installed and reaching the host; Firefox's release is on.
    const again = await start();
    const second = await expectReachingTheHost(again, id);
    const meeting = await again.browser.newPage();
    await meeting.goto(pages.url('meeting.html'));
    await pageWaitFor(meeting, 'the meeting page', () => window.ready !== undefined);
    await meeting.evaluate(() => window.ready);
    const firefoxStreams = async () =>
      (await rig.recordStreams()).filter((s) =>
        /firefox/i.test(`${s.applicationName ?? ''} ${s.processBinary ?? ''}`),
      );
    await waitFor('Firefox’s record stream running', async () =>
      (await firefoxStreams()).some((s) => !s.corked) ? true : null,
    );
    // Firefox keeps the device at least `delay` after it came on: mute after that.
    await new Promise((r) => setTimeout(r, DELAY_MS + 200));
    const mutedAt = Date.now();
    await meeting.evaluate(() => window.mute());
    await waitFor(
      'Firefox’s record stream gone after mute (the pref micoff wrote is in effect)',
      async () => ((await firefoxStreams()).length === 0 ? true : null),
      { timeoutMs: DELAY_MS + 5000 },
    );
    const releasedMs = Date.now() - mutedAt;
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
