// `micoff-host install --firefox-release` on Debian's Firefox ESR: the installer (not the test) puts
// Firefox's own release pref into the profile's user.js, Firefox started on that profile releases the
// microphone at the server after a mute, and `--uninstall` takes exactly micoff's lines out again,
// leaving the user's own lines as they were.
//
// Firefox is started here without puppeteer's launcher: that one rewrites user.js from its own prefs
// at every start, which would hide what the installer wrote. The prefs the WebDriver BiDi connection
// needs are written first (by @puppeteer/browsers' createProfile) and play the user's own lines.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Browser as BrowserKind,
  createProfile,
  launch as launchProcess,
  WEBDRIVER_BIDI_WEBSOCKET_ENDPOINT_REGEX,
} from '@puppeteer/browsers';
import puppeteer from 'puppeteer-core';
import { HOST_NAME } from '../../extension/src/shared/protocol.ts';
import { pageWaitFor } from '../rig/firefox.ts';
import { expect, test } from '../rig/fixtures.ts';
import { requireHost } from '../rig/host.ts';
import { FIREFOX, HOST_BINARY } from '../rig/paths.ts';
import { run, waitFor } from '../rig/proc.ts';

const DELAY_MS = 300;
const PREF = 'media.getusermedia.microphone.off_while_disabled';

/** A profile's lines, without the empty ones at the end (a final newline is not a line of the user's). */
const lines = (text: string) => text.replace(/\n+$/, '').split('\n');

test('install --firefox-release: Firefox ESR releases the mic on mute from micoff’s user.js; --uninstall keeps the user’s lines', async ({
  rig,
  pages,
}) => {
  test.skip(!existsSync(FIREFOX), `${FIREFOX} is not installed (Debian's firefox-esr; none on Ubuntu)`);
  test.setTimeout(120_000);
  const home = mkdtempSync(join(tmpdir(), 'micoff-ffrel-'));
  const profile = join(home, '.mozilla', 'firefox', 'test.default-esr');
  const hosts = join(home, '.mozilla', 'native-messaging-hosts');
  const host = requireHost(HOST_BINARY);
  const installArgs = [
    'install',
    '--browser',
    'firefox',
    '--target-dir',
    hosts,
    '--firefox-release',
    '--firefox-profile',
    profile,
  ];
  let proc: ReturnType<typeof launchProcess> | undefined;
  try {
    mkdirSync(hosts, { recursive: true });
    // The user's own lines: what the BiDi connection needs, plus the rig's audio settings.
    await createProfile(BrowserKind.FIREFOX, {
      path: profile,
      preferences: {
        'media.navigator.permission.disabled': true,
        'media.navigator.streams.fake': false,
        'media.cubeb.backend': 'pulse',
        'media.autoplay.default': 0,
        'fission.webContentIsolationStrategy': 0,
      },
    });
    const usersOwn = readFileSync(join(profile, 'user.js'), 'utf8');
    expect(usersOwn).not.toContain(PREF);

    const installed = await run(host, [...installArgs, '--release-delay-ms', String(DELAY_MS)], {
      timeoutMs: 15_000,
    });
    expect(installed.code, installed.stdout + installed.stderr).toBe(0);
    const withPref = readFileSync(join(profile, 'user.js'), 'utf8');
    expect(lines(withPref).slice(0, lines(usersOwn).length)).toEqual(lines(usersOwn));
    expect(withPref).toContain(`user_pref("${PREF}.enabled", true);`);
    expect(withPref).toContain(`user_pref("${PREF}.delay_ms", ${DELAY_MS});`);

    proc = launchProcess({
      executablePath: FIREFOX,
      args: ['--headless', '--no-remote', '--remote-debugging-port=0', '--profile', profile],
      env: { ...rig.clientEnv, HOME: home },
    });
    const ws = await proc.waitForLineOutput(WEBDRIVER_BIDI_WEBSOCKET_ENDPOINT_REGEX, 60_000);
    const browser = await puppeteer.connect({
      browserWSEndpoint: `${ws}/session`,
      protocol: 'webDriverBiDi',
    });
    try {
      const meeting = await browser.newPage();
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
      console.log(
        `firefox-release: record stream gone ${Date.now() - mutedAt} ms after mute (delay ${DELAY_MS} ms)`,
      );
    } finally {
      await browser.close().catch(() => {});
    }
    await proc.close();
    proc = undefined;

    const removed = await run(host, [...installArgs, '--uninstall'], { timeoutMs: 15_000 });
    expect(removed.code, removed.stdout + removed.stderr).toBe(0);
    const after = readFileSync(join(profile, 'user.js'), 'utf8');
    expect(after).not.toContain(PREF);
    expect(after).not.toContain('micoff');
    expect(lines(after)).toEqual(lines(usersOwn));
    expect(existsSync(join(hosts, `${HOST_NAME}.json`))).toBe(false);
  } finally {
    if (proc) await proc.close().catch(() => proc?.kill());
    rmSync(home, { recursive: true, force: true });
  }
});
