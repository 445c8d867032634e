// What the installer specs share (per profile, firefox-release-install; system-wide by policy,
// firefox-system-install): the packaged xpi, a user's fresh profile, Firefox's own records of the
// add-on, micoff's background reaching the host, and Firefox's own release timed at the server.
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Browser as BrowserKind, createProfile } from '@puppeteer/browsers';
import type { Page } from 'puppeteer-core';
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
import { FIREFOX, FIREFOX_EXTENSION_DIR, ROOT } from './paths.ts';
import { run, waitFor } from './proc.ts';

/** Every pref micoff's user.js block may set. */
export const MICOFF_PREFS = [
  'xpinstall.signatures.required',
  'extensions.autoDisableScopes',
  'extensions.startupScanScopes',
  'media.getusermedia.microphone.off_while_disabled.enabled',
  'media.getusermedia.microphone.off_while_disabled.delay_ms',
];

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

/** The rig's prefs, a profile's user.js lines as the user's own: the WebDriver BiDi connection's (written
 * by @puppeteer/browsers' createProfile), the audio settings, the add-on's pinned moz-extension UUID. */
const RIG_PREFS: Record<string, unknown> = {
  'media.navigator.permission.disabled': true,
  'media.navigator.streams.fake': false,
  'media.cubeb.backend': 'pulse',
  'media.autoplay.default': 0,
  'fission.webContentIsolationStrategy': 0,
  'extensions.webextensions.uuids': JSON.stringify({ [firefoxExtensionId()]: FIREFOX_EXTENSION_UUID }),
  // Firefox's remote agent (there for the test to look in) would otherwise set its
  // "recommended" automation prefs, add-on scopes among them, and leave them in prefs.js.
  'remote.prefs.recommended': false,
};

/** Writes the rig's prefs as `profile`'s user.js (the user's own lines). */
async function rigUserJs(profile: string): Promise<Omit<UserProfile, 'profile'>> {
  await createProfile(BrowserKind.FIREFOX, { path: profile, preferences: RIG_PREFS });
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
  return { userJs, usersOwn };
}

/**
 * A fresh profile, never started, listed in `<home>/.mozilla/firefox/profiles.ini` as a user's (the
 * legacy layout, laid out by the test). Its user.js holds the rig's prefs, the user's own lines.
 */
export async function createUserProfile(home: string): Promise<UserProfile> {
  const profile = join(home, '.mozilla', 'firefox', 'test.default-esr');
  mkdirSync(profile, { recursive: true });
  writeFileSync(
    join(home, '.mozilla', 'firefox', 'profiles.ini'),
    '[Profile0]\nName=test\nIsRelative=1\nPath=test.default-esr\nDefault=1\n\n[General]\nStartWithLastProfile=1\nVersion=2\n',
  );
  return { profile, ...(await rigUserJs(profile)) };
}

/** `base` as a new user's environment on `home`: no XDG base folders of the test runner's (Firefox and
 * micoff-host then use the home's defaults, as for a user who set none). */
export function freshUserEnv(base: NodeJS.ProcessEnv, home: string): NodeJS.ProcessEnv {
  const env = Object.fromEntries(
    Object.entries(base).filter(([k]) => !/^XDG_(CONFIG|DATA|STATE|CACHE)_HOME$/.test(k)),
  );
  return { ...env, HOME: home };
}

export interface MadeProfile extends UserProfile {
  /** The folder of the profiles.ini Firefox wrote (its profile root). */
  root: string;
  /** Every profile that profiles.ini lists (Firefox ESR makes two, `default` and `default-esr`). */
  all: string[];
}

/**
 * The profile Firefox makes for a new user: Firefox ESR run once, headless, on `env` (its HOME fresh),
 * left to exit. Returns the profile this Firefox starts by default (installs.ini's `Default=`), found
 * where Firefox put it (`${XDG_CONFIG_HOME:-~/.config}/mozilla/firefox` for Firefox 147+ on a fresh
 * HOME, `~/.mozilla/firefox` before), with the rig's prefs as its user.js.
 */
export async function firefoxMadeProfile(env: NodeJS.ProcessEnv): Promise<MadeProfile> {
  const home = env.HOME;
  if (!home) throw new Error('firefoxMadeProfile: no HOME');
  const shot = join(home, '.first-run.png');
  const first = await run(FIREFOX, ['--headless', '--screenshot', shot, 'about:blank'], {
    env,
    timeoutMs: 60_000,
  });
  rmSync(shot, { force: true });
  if (first.code !== 0) throw new Error(`Firefox's first run failed:\n${first.stdout}${first.stderr}`);
  const roots = [
    join(env.XDG_CONFIG_HOME || join(home, '.config'), 'mozilla', 'firefox'),
    join(home, '.mozilla', 'firefox'),
  ];
  const root = roots.find((r) => existsSync(join(r, 'installs.ini')));
  if (!root) throw new Error(`Firefox's first run wrote no installs.ini in ${roots.join(' or ')}`);
  const defaults = /^Default=(.+)$/m.exec(readFileSync(join(root, 'installs.ini'), 'utf8'));
  if (!defaults?.[1]) throw new Error(`${root}/installs.ini names no default profile`);
  const profile = join(root, defaults[1].trim());
  const all = [...readFileSync(join(root, 'profiles.ini'), 'utf8').matchAll(/^Path=(.+)$/gm)].map((m) =>
    join(root, (m[1] ?? '').trim()),
  );
  return { root, all, profile, ...(await rigUserJs(profile)) };
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

/** The meeting page's call on `meeting`, Firefox's record stream running, held `delayMs` (Firefox
 * keeps the device at least that long after it came on) and a little more. */
async function callCapturing(
  meeting: Page,
  rig: AudioRig,
  pages: PageServer,
  delayMs: number,
): Promise<void> {
  await meeting.goto(pages.url('meeting.html'));
  await pageWaitFor(meeting, 'the meeting page', () => window.ready !== undefined);
  await meeting.evaluate(() => window.ready);
  await waitFor('Firefox’s record stream running', async () =>
    (await firefoxRecordStreams(rig)).some((s) => !s.corked) ? true : null,
  );
  await new Promise((r) => setTimeout(r, delayMs + 200));
}

/**
 * A call on the meeting page, muted once Firefox has had the device `delayMs`, then unmuted once its
 * record stream has left the server. Returns how long after the mute the stream left, and how long
 * after the unmute one was back; throws when either is not seen within `withinMs`.
 */
export async function muteReleasesUnmuteReacquires(
  ff: FirefoxOnProfile,
  rig: AudioRig,
  pages: PageServer,
  delayMs: number,
  withinMs: number,
): Promise<{ releasedMs: number; reacquiredMs: number }> {
  const meeting = await ff.browser.newPage();
  try {
    await callCapturing(meeting, rig, pages, delayMs);
    const mutedAt = Date.now();
    await meeting.evaluate(() => window.mute());
    await waitFor(
      'Firefox’s record stream gone after the mute',
      async () => ((await firefoxRecordStreams(rig)).length === 0 ? true : null),
      { timeoutMs: withinMs, intervalMs: 20 },
    );
    const releasedMs = Date.now() - mutedAt;
    const unmutedAt = Date.now();
    await meeting.evaluate(() => window.unmute());
    await waitFor(
      'Firefox’s record stream back after the unmute',
      async () => ((await firefoxRecordStreams(rig)).some((s) => !s.corked) ? true : null),
      { timeoutMs: withinMs, intervalMs: 20 },
    );
    return { releasedMs, reacquiredMs: Date.now() - unmutedAt };
  } finally {
    await meeting.close().catch(() => {});
  }
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
  await callCapturing(meeting, rig, pages, delayMs);
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
