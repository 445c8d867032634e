// Debian's Firefox ESR through puppeteer-core over WebDriver BiDi (Playwright's Firefox needs its own
// patched build; docs/test-rig.md), capturing for real from the rig's server. Firefox is started here
// rather than by puppeteer's launcher, which rewrites user.js at every start and would hide what
// `micoff-host install` wrote into a profile.
// - launchFirefox: a throwaway profile, dist/firefox as a temporary add-on, a HOME of its own with the
//   host manifest written by the host's installer (optionally Firefox's release, `--firefox-release`;
//   or none: micoff without its host).
// - startFirefoxOnProfile: Firefox on a given profile as a user starts it, for the installer's specs.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  Browser as BrowserKind,
  createProfile,
  launch as launchProcess,
  WEBDRIVER_BIDI_WEBSOCKET_ENDPOINT_REGEX,
} from '@puppeteer/browsers';
import puppeteer, { type Browser, type Page, TimeoutError } from 'puppeteer-core';
import { FIREFOX_RELEASE_PREF } from '../../extension/src/shared/firefox-release.ts';
import type { TabReleaseView } from '../../extension/src/shared/messages/popup-background.ts';
import type { Settings } from '../../extension/src/shared/settings.ts';
import { installHostManifest } from './host.ts';
import { FIREFOX, FIREFOX_EXTENSION_DIR } from './paths.ts';
import { waitFor } from './proc.ts';

/** The moz-extension:// UUID pinned through `extensions.webextensions.uuids`, so pages are addressable. */
export const FIREFOX_EXTENSION_UUID = '6d1f0c2e-9a57-4b8e-8f43-0c1de0f0a11c';

/** The add-on id, as the build wrote it (`browser_specific_settings.gecko.id` of dist/firefox). */
export function firefoxExtensionId(extensionDir = FIREFOX_EXTENSION_DIR): string {
  const file = join(extensionDir, 'manifest.json');
  if (!existsSync(file)) throw new Error(`${file} is missing (run \`npm run build\`)`);
  const id = JSON.parse(readFileSync(file, 'utf8'))?.browser_specific_settings?.gecko?.id;
  if (typeof id !== 'string') throw new Error(`${file} names no gecko id`);
  return id;
}

/** Why Firefox cannot be started here (its binary is missing), or null. */
export function firefoxMissing(): string | null {
  return existsSync(FIREFOX)
    ? null
    : `${FIREFOX} is not installed (Debian's firefox-esr package; Ubuntu has none, its Firefox is a snap; MICOFF_FIREFOX=/path/to/firefox picks another build)`;
}

export interface FirefoxOptions {
  /** The audio server's client environment (PULSE_SERVER). */
  env: NodeJS.ProcessEnv;
  /**
   * Firefox's own mic release while every track is disabled (its pref, off by default since 84), set
   * among the rig's prefs, or with `installer` by `micoff-host install --firefox-release
   * --firefox-profile P --release-delay-ms N` into the profile's user.js: what a user runs.
   */
  nativeRelease?: { delayMs: number; installer?: boolean };
  /** More prefs (they win over the rig's). */
  prefs?: Record<string, unknown>;
  /** Load micoff (dist/firefox) as a temporary add-on (default true; false: a control without it). */
  withExtension?: boolean;
  /** Write the host manifest into the HOME (default true; false: micoff without micoff-host). */
  withHost?: boolean;
}

export interface LaunchedFirefox {
  browser: Browser;
  home: string;
  /** The profile folder Firefox runs on. */
  profile: string;
  /** The parent process (our child: /usr/bin/firefox-esr links to the binary, no wrapper). */
  pid: number;
  extensionUrl(path: string): string;
  /** A new tab on one of the extension's pages (popup.html, options.html), once its DOM is there. */
  openExtensionPage(path: string): Promise<Page>;
  close(): Promise<void>;
}

export async function launchFirefox(o: FirefoxOptions): Promise<LaunchedFirefox> {
  const missing = firefoxMissing();
  if (missing) throw new Error(missing);
  const home = mkdtempSync(join(tmpdir(), 'micoff-firefox-'));
  const profile = join(home, '.mozilla', 'firefox', 'micoff.default-esr');
  let proc: ReturnType<typeof launchProcess> | undefined;
  let browser: Browser | undefined;
  try {
    const release = o.nativeRelease;
    const prefs: Record<string, unknown> = {
      'media.navigator.permission.disabled': true, // no prompt; the device is real
      // What a user's "Allow" leaves behind: navigator.permissions says 'granted' for the microphone
      // (without a prompt nothing is recorded and it says 'prompt'; the background counts a frame's
      // reports only while it is 'granted', docs/design/security.md).
      'permissions.default.microphone': 1,
      'media.navigator.streams.fake': false,
      'media.cubeb.backend': 'pulse',
      'media.autoplay.default': 0,
      'extensions.webextensions.uuids': JSON.stringify({ [firefoxExtensionId()]: FIREFOX_EXTENSION_UUID }),
      // What puppeteer's launcher adds for WebDriver BiDi (one content process for web content).
      'fission.webContentIsolationStrategy': 0,
    };
    if (!release?.installer) prefs[`${FIREFOX_RELEASE_PREF}.enabled`] = !!release;
    if (release && !release.installer) prefs[`${FIREFOX_RELEASE_PREF}.delay_ms`] = release.delayMs;
    Object.assign(prefs, o.prefs);
    // The rig's prefs (and those BiDi needs) are the profile's own user.js lines; the installer's
    // block goes after them.
    await createProfile(BrowserKind.FIREFOX, { path: profile, preferences: prefs });
    if (o.withHost === false && release?.installer) {
      throw new Error(
        'launchFirefox: the installer (nativeRelease.installer) is micoff-host: not withHost: false',
      );
    }
    if (o.withHost !== false)
      await installHostManifest(
        join(home, '.mozilla', 'native-messaging-hosts'),
        'firefox',
        undefined,
        release?.installer ? { firefoxProfile: profile, releaseDelayMs: release.delayMs } : undefined,
      );
    if (release?.installer) {
      const userJs = readFileSync(join(profile, 'user.js'), 'utf8');
      const want = `user_pref("${FIREFOX_RELEASE_PREF}.enabled", true);`;
      if (!userJs.includes(want)) {
        throw new Error(
          `micoff-host install --firefox-release exited 0 but ${profile}/user.js has no ${want}`,
        );
      }
    }
    proc = launchProcess({
      executablePath: FIREFOX,
      args: ['--headless', '--no-remote', '--remote-debugging-port=0', '--profile', profile],
      // WebDriver BiDi navigates a tab to moz-extension:// pages (the popup) only with this.
      env: { ...o.env, HOME: home, MOZ_REMOTE_ALLOW_SYSTEM_ACCESS: '1' },
    });
    const pid = proc.nodeProcess.pid;
    if (!pid) throw new Error('Firefox started without a process id');
    const ws = await proc.waitForLineOutput(WEBDRIVER_BIDI_WEBSOCKET_ENDPOINT_REGEX, 60_000);
    const connected = await puppeteer.connect({
      browserWSEndpoint: `${ws}/session`,
      protocol: 'webDriverBiDi',
    });
    browser = connected;
    if (o.withExtension !== false) await connected.installExtension(FIREFOX_EXTENSION_DIR);
    const extensionUrl = (path: string) => `moz-extension://${FIREFOX_EXTENSION_UUID}/${path}`;
    const started = proc;
    return {
      browser: connected,
      home,
      profile,
      pid,
      extensionUrl,
      openExtensionPage: (path) => openExtensionPage(connected, extensionUrl(path)),
      async close() {
        await connected.close().catch(() => {});
        await started.close().catch(() => started.kill());
        rmSync(home, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await browser?.close().catch(() => {});
    await proc?.close().catch(() => proc?.kill());
    rmSync(home, { recursive: true, force: true });
    throw e;
  }
}

/** Polls `fn(arg)` in `page` until it returns a truthy value, or throws naming `what`. A wait whose
 * document goes away under it (a navigation replaces the realm it polls: puppeteer then fails it with
 * "Waiting failed" within a few hundred ms, seen about once in 40 popups opened) starts again in the
 * page's new document, until the deadline. */
export async function pageWaitFor<T>(
  page: Page,
  what: string,
  fn: (arg: string) => T,
  timeoutMs = 15_000,
  arg = '',
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  const aborted = new Map<string, number>(); // why a wait was cut short -> how often
  for (;;) {
    try {
      const timeout = Math.max(1, deadline - Date.now());
      const handle = await page.waitForFunction(fn, { timeout, polling: 200 }, arg);
      return (await handle.jsonValue()) as T;
    } catch (e) {
      const timedOut = e instanceof TimeoutError || Date.now() >= deadline;
      if (timedOut || page.isClosed()) {
        const cut = [...aborted].map(([m, n]) => `${m} (${n}x)`).join('; ');
        const before = cut ? `; before it, the wait was cut short: ${cut}` : '';
        throw new Error(`Firefox: ${what} not within ${timeoutMs} ms (${(e as Error).message}${before})`);
      }
      const why = (e as Error).message;
      aborted.set(why, (aborted.get(why) ?? 0) + 1);
      await new Promise((r) => setTimeout(r, 100));
    }
  }
}

/** A new tab on `url` (a moz-extension:// page), once its DOM is there. */
export async function openExtensionPage(browser: Browser, url: string): Promise<Page> {
  const page = await browser.newPage();
  // The page loads, but BiDi reports no navigation events for a moz-extension:// document (it runs in
  // the extension process), so `goto` would wait out its timeout: wait on the document.
  page.goto(url, { timeout: 60_000 }).catch(() => {});
  await pageWaitFor(
    page,
    `${url} loaded`,
    (u: string) => location.href === u && document.readyState !== 'loading',
    15_000,
    url,
  );
  return page;
}

export interface FirefoxOnProfile {
  browser: Browser;
  /** The parent process (/usr/bin/firefox-esr links to the binary, no wrapper). */
  pid: number;
  /** From spawning Firefox to its WebDriver BiDi endpoint answering. */
  startedMs: number;
  /** Closes Firefox as a user does (it writes prefs.js and extensions.json) and waits for its exit;
   * returns how long that took. */
  stop(): Promise<number>;
}

/**
 * Firefox ESR on `profile`, started as a user starts it: headless, on its own profile, with nothing
 * loaded or written by the test (only the remote-debugging port, to connect over WebDriver BiDi; the
 * prefs that connection needs are the user's own lines in that profile, see `createProfile` of
 * @puppeteer/browsers). `MOZ_REMOTE_ALLOW_SYSTEM_ACCESS` lets BiDi open the add-on's moz-extension://
 * pages. `executablePath`: a launcher that execs Firefox (same process id), e.g. inside a private mount
 * namespace (rig/private-mounts.ts).
 */
export async function startFirefoxOnProfile(
  profile: string,
  env: NodeJS.ProcessEnv,
  executablePath = FIREFOX,
): Promise<FirefoxOnProfile> {
  const spawned = Date.now();
  const proc = launchProcess({
    executablePath,
    args: ['--headless', '--no-remote', '--remote-debugging-port=0', '--profile', profile],
    env: { ...env, MOZ_REMOTE_ALLOW_SYSTEM_ACCESS: '1' },
  });
  const pid = proc.nodeProcess.pid;
  try {
    if (!pid) throw new Error('Firefox started without a process id');
    const ws = await proc.waitForLineOutput(WEBDRIVER_BIDI_WEBSOCKET_ENDPOINT_REGEX, 60_000);
    const browser = await puppeteer.connect({
      browserWSEndpoint: `${ws}/session`,
      protocol: 'webDriverBiDi',
    });
    const startedMs = Date.now() - spawned;
    return {
      browser,
      pid,
      startedMs,
      async stop() {
        const t = Date.now();
        const exited = new Promise<void>((resolve) => {
          if (proc.nodeProcess.exitCode !== null || proc.nodeProcess.signalCode !== null) resolve();
          else proc.nodeProcess.once('exit', () => resolve());
        });
        await browser.close().catch(() => {});
        await exited;
        return Date.now() - t;
      },
    };
  } catch (e) {
    await proc.close().catch(() => proc.kill());
    throw e;
  }
}

/** The pid of the native host Firefox (`firefoxPid`) started for add-on `addonId`, if it runs: Firefox
 * passes the manifest's path and the add-on id as the host's arguments. */
export function nativeHostOf(
  firefoxPid: number,
  addonId: string,
  hostBinaryName = 'micoff-host',
): number | null {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
      if (ppid !== firefoxPid) continue;
      const argv = readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0');
      if (argv[0]?.endsWith(`/${hostBinaryName}`) && argv.includes(addonId)) return Number(entry);
    } catch {
      // gone meanwhile
    }
  }
  return null;
}

/** The background page's test surface (`globalThis.micoff`), reached from one of the extension's pages. */
interface BackgroundSurface {
  micoff: {
    tabs: { all(): Record<string, TabReleaseView> };
    settings: { update(patch: Partial<Settings>): Promise<unknown> };
  };
}

/** Every tab's release view as the background holds it (what the popup shows), through `extensionPage`. */
export async function backgroundTabs(extensionPage: Page): Promise<Record<string, TabReleaseView>> {
  const json = await extensionPage.evaluate(async () => {
    const runtime = (
      globalThis as unknown as { browser: { runtime: { getBackgroundPage(): Promise<unknown> } } }
    ).browser.runtime;
    const bg = (await runtime.getBackgroundPage()) as BackgroundSurface;
    return JSON.stringify(bg.micoff.tabs.all());
  });
  return JSON.parse(json) as Record<string, TabReleaseView>;
}

/** The popup for a tab (`popup.html?tab=<id>`, the tab as the background knows it), opened once the page
 * world's report of a page on `origin` reached the background. `extensionPage`: any extension page. */
export async function popupForTab(ff: LaunchedFirefox, extensionPage: Page, origin: string): Promise<Page> {
  const tabId = await waitFor('the meeting’s tab at the background (the page world’s report)', async () => {
    const entry = Object.entries(await backgroundTabs(extensionPage)).find(([, v]) => v.origin === origin);
    return entry ? Number(entry[0]) : null;
  });
  return ff.openExtensionPage(`popup.html?tab=${tabId}`);
}

/** Changes micoff's settings as the options page would, through `extensionPage`. */
export async function updateSettings(extensionPage: Page, patch: Partial<Settings>): Promise<void> {
  await extensionPage.evaluate(async (json) => {
    const runtime = (
      globalThis as unknown as { browser: { runtime: { getBackgroundPage(): Promise<unknown> } } }
    ).browser.runtime;
    const bg = (await runtime.getBackgroundPage()) as BackgroundSurface;
    await bg.micoff.settings.update(JSON.parse(json));
  }, JSON.stringify(patch));
}
