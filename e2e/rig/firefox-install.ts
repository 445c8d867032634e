// What the installer specs share (per profile, firefox-release-install; system-wide by policy,
// firefox-system-install): the packaged xpi, a user's fresh profile, Firefox's own records of the
// add-on, micoff's background reaching the host, and Firefox's own release timed at the server.
import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Browser as BrowserKind, createProfile } from '@puppeteer/browsers';
import { FIREFOX_RELEASE_PREF } from '../../extension/src/shared/firefox-release.ts';
import type { AudioRig } from './audio-rig.ts';
import {
  FIREFOX_EXTENSION_UUID,
  type FirefoxOnProfile,
  firefoxExtensionId,
  nativeHostOf,
  openExtensionPage,
  pageWaitFor,
} from './firefox.ts';
import type { PageServer } from './page-server.ts';
import { FIREFOX_EXTENSION_DIR, ROOT } from './paths.ts';
import { run, waitFor } from './proc.ts';

/** The xpi `npm run package` writes (scripts/package.mjs, from the built dist/firefox), into `outDir`. */
export async function packagedXpi(outDir: string): Promise<string> {
  const packed = await run(
    process.execPath,
    [join(ROOT, 'scripts', 'package.mjs'), '--no-build', '--no-crx', `--out-dir=${outDir}`],
    { timeoutMs: 60_000 },
  );
  if (packed.code !== 0) throw new Error(`scripts/package.mjs failed:\n${packed.stdout}${packed.stderr}`);
  const version = JSON.parse(readFileSync(join(FIREFOX_EXTENSION_DIR, 'manifest.json'), 'utf8')).version;
  const xpi = join(outDir, `micoff-${version}.xpi`);
  if (!existsSync(xpi)) throw new Error(`scripts/package.mjs wrote no ${xpi}`);
  return xpi;
}

/** A profile's lines, without the empty ones at the end (a final newline is not a line of the user's). */
export const lines = (text: string) => text.replace(/\n+$/, '').split('\n');

export interface UserProfile {
  profile: string;
  userJs: string;
  /** The profile's user.js as the user has it (before any install). */
  usersOwn: string;
}

/**
 * A fresh profile, never started, listed in `<home>/.mozilla/firefox/profiles.ini` as a user's. Its
 * user.js holds what the rig needs (the prefs of the WebDriver BiDi connection, written by
 * @puppeteer/browsers' createProfile, the rig's audio settings, the add-on's pinned moz-extension
 * UUID): the user's own lines.
 */
export async function createUserProfile(home: string): Promise<UserProfile> {
  const profile = join(home, '.mozilla', 'firefox', 'test.default-esr');
  await createProfile(BrowserKind.FIREFOX, {
    path: profile,
    preferences: {
      'media.navigator.permission.disabled': true,
      'media.navigator.streams.fake': false,
      'media.cubeb.backend': 'pulse',
      'media.autoplay.default': 0,
      'fission.webContentIsolationStrategy': 0,
      'extensions.webextensions.uuids': JSON.stringify({ [firefoxExtensionId()]: FIREFOX_EXTENSION_UUID }),
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
  // them up is the installer's job: they go.
  const usersOwn = readFileSync(userJs, 'utf8')
    .split('\n')
    .filter((l) => !/"extensions\.(autoDisableScopes|enabledScopes)"/.test(l))
    .join('\n');
  writeFileSync(userJs, usersOwn);
  if (usersOwn.includes(FIREFOX_RELEASE_PREF))
    throw new Error('the fresh profile already has the release pref');
  return { profile, userJs, usersOwn };
}

/** micoff's entry in Firefox's add-on database (`extensions.json`, written by Firefox), if any. */
export function addonRecord(profile: string, id: string): Record<string, unknown> | undefined {
  const file = join(profile, 'extensions.json');
  if (!existsSync(file)) return undefined;
  const db = JSON.parse(readFileSync(file, 'utf8')) as { addons?: Record<string, unknown>[] };
  return db.addons?.find((a) => a.id === id);
}

export interface ReachedHost {
  /** What the popup showed (`host 0.1.0 …`). */
  pill: string;
  /** The micoff-host process Firefox started for the add-on. */
  hostPid: number;
  /** Its arguments: Firefox passes the manifest it used and the add-on id. */
  hostArgv: string[];
}

/** The add-on runs and its background talks to micoff-host: Firefox started the host for micoff's id,
 * and the popup shows the version the host answered. */
export async function expectReachingTheHost(ff: FirefoxOnProfile, id: string): Promise<ReachedHost> {
  const hostPid = await waitFor(
    'micoff-host started by Firefox for micoff’s add-on',
    async () => nativeHostOf(ff.pid, id),
    { timeoutMs: 30_000, intervalMs: 100 },
  );
  const hostArgv = readFileSync(`/proc/${hostPid}/cmdline`, 'utf8').split('\0').filter(Boolean);
  const popup = await openExtensionPage(ff.browser, `moz-extension://${FIREFOX_EXTENSION_UUID}/popup.html`);
  const pill = await pageWaitFor(popup, 'the popup naming the host it reached', () => {
    const text = document.querySelector('#host-pill')?.textContent ?? '';
    return /^host \d+\.\d+\.\d+/.test(text) ? text : '';
  });
  await popup.close();
  return { pill, hostPid, hostArgv };
}

/** This Firefox's record streams at the rig's server. */
export async function firefoxRecordStreams(rig: AudioRig) {
  return (await rig.recordStreams()).filter((s) =>
    /firefox/i.test(`${s.applicationName ?? ''} ${s.processBinary ?? ''}`),
  );
}

/**
 * A call on the meeting page, muted once Firefox has had the device `delayMs` (it keeps it at least
 * that long after it came on). Returns how long after the mute Firefox's record stream left the
 * server, or null when it was still there `notBeforeMs` after the mute (the release not in effect).
 */
export async function muteAndWatchRelease(
  ff: FirefoxOnProfile,
  rig: AudioRig,
  pages: PageServer,
  delayMs: number,
  notBeforeMs: number,
): Promise<number | null> {
  const meeting = await ff.browser.newPage();
  await meeting.goto(pages.url('meeting.html'));
  await pageWaitFor(meeting, 'the meeting page', () => window.ready !== undefined);
  await meeting.evaluate(() => window.ready);
  await waitFor('Firefox’s record stream running', async () =>
    (await firefoxRecordStreams(rig)).some((s) => !s.corked) ? true : null,
  );
  await new Promise((r) => setTimeout(r, delayMs + 200));
  const mutedAt = Date.now();
  await meeting.evaluate(() => window.mute());
  try {
    await waitFor(
      'Firefox’s record stream gone after the mute',
      async () => ((await firefoxRecordStreams(rig)).length === 0 ? true : null),
      { timeoutMs: notBeforeMs, intervalMs: 20 },
    );
    return Date.now() - mutedAt;
  } catch (e) {
    // Not released only when the stream is seen still there: a rig that cannot be read (pactl
    // failing) must fail the test, not pass a "stays open" check.
    if ((await firefoxRecordStreams(rig)).length > 0) return null;
    throw e;
  } finally {
    await meeting.close().catch(() => {});
  }
}
