// Debian's Chromium with the unpacked extension, launched through Playwright and capturing for real
// from the rig's server (PULSE_SERVER; no --use-fake-device-for-media-stream), with an explicit
// user-data-dir whose NativeMessagingHosts/ points at the built micoff-host.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium, type Worker } from '@playwright/test';
import { installChromiumHostManifest } from './host.ts';
import { CHROMIUM, EXTENSION_DIR } from './paths.ts';
import { assertAlive, startChild, stopChild, waitFor } from './proc.ts';

export interface LaunchOptions {
  /** The audio server's client environment (PULSE_SERVER). */
  env: NodeJS.ProcessEnv;
  extensionDir?: string;
  /** Without the extension (a baseline). */
  withExtension?: boolean;
  /** Write the native host manifest (default true with the extension). */
  withHost?: boolean;
  /** The micoff-host the manifest names (default: this build's). */
  hostBinary?: string;
  userDataDir?: string;
  extraArgs?: string[];
  /** What to start instead of CHROMIUM (e.g. micoff's PATH wrapper, which execs it). */
  executablePath?: string;
  /** An X display (e2e/rig/xvfb.ts) to run headful on: in headless mode every page is visible and
   * focused, so a background tab or an unfocused window needs a real one. */
  display?: string;
  /** With `display`: start Chromium ourselves and attach over CDP without Playwright's per-page
   * overrides. Playwright enables focus emulation on every page it opens, which also keeps the page
   * `visible` (Chromium counts the emulation as a capturer of the tab), so a page behind another tab
   * never becomes hidden; attached with `noDefaults` it does, as for a user. Playwright's own launch
   * switches (background timer throttling off and the like) are not applied either. */
  realFocus?: boolean;
  /** Chromium's own permission layer instead of the auto-accepting fake UI
   * (`--use-fake-ui-for-media-stream` bypasses it, one-time grants and their expiry included): the
   * microphone is then granted by the test (`context.grantPermissions`) or at a real prompt. */
  realPermissions?: boolean;
  /** More unpacked extensions to load beside micoff's (test tools, e.g. site-settings-ext). */
  extraExtensions?: string[];
}

export interface LaunchedChromium {
  context: BrowserContext;
  userDataDir: string;
  /** The browser (main) process: found by its --user-data-dir among /proc/<pid>/cmdline. */
  browserPid(): Promise<number>;
  /** When the browser went away without `close()` (it exited, crashed or was killed under the test),
   * else null: a failure report tells that from a test that timed out and closed it. */
  closedByItself(): Date | null;
  close(): Promise<void>;
}

/** Why Chromium cannot be started here (its binary is missing), or null (for `need`, e2e/rig/needs.ts). */
export function chromiumMissing(): string | null {
  return existsSync(CHROMIUM)
    ? null
    : `${CHROMIUM} is not installed (Debian's chromium package; MICOFF_CHROMIUM=/path/to/chromium picks another build)`;
}

export function chromiumArgs(o: {
  extensionDir?: string;
  userDataDir: string;
  extra?: string[];
  headful?: boolean;
  realPermissions?: boolean;
  extraExtensions?: string[];
}): string[] {
  const args = [
    ...(o.headful ? [] : ['--headless=new']),
    // Auto-accept the permission prompt (the DEVICE is real), unless the test needs the real layer.
    ...(o.realPermissions ? [] : ['--use-fake-ui-for-media-stream']),
    '--disable-background-networking',
    '--disable-component-update',
    '--disable-sync',
    '--no-first-run',
    '--no-default-browser-check',
    // Chromium's sandbox needs user namespaces or a setuid helper; as root it refuses to start.
    ...(process.getuid?.() === 0 ? ['--no-sandbox'] : []),
  ];
  const extensions = [...(o.extensionDir ? [o.extensionDir] : []), ...(o.extraExtensions ?? [])].join(',');
  if (extensions) args.push(`--disable-extensions-except=${extensions}`, `--load-extension=${extensions}`);
  return [...args, ...(o.extra ?? [])];
}

export async function launchChromium(o: LaunchOptions): Promise<LaunchedChromium> {
  const ext = o.withExtension === false ? undefined : (o.extensionDir ?? EXTENSION_DIR);
  const userDataDir = o.userDataDir ?? mkdtempSync(join(tmpdir(), 'micoff-chromium-'));
  const ownsDir = !o.userDataDir;
  if (ext && o.withHost !== false) await installChromiumHostManifest(userDataDir, o.hostBinary);
  if (o.realFocus) {
    if (!o.display) throw new Error('launchChromium: realFocus needs a display');
    return launchOverCdp({ ...o, display: o.display }, ext, userDataDir, ownsDir);
  }
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: o.executablePath ?? CHROMIUM,
    headless: !o.display,
    // Playwright mutes audio by default; capture and the audio service must run as for a user.
    ignoreDefaultArgs: ['--mute-audio'],
    env: { ...o.env, ...(o.display ? { DISPLAY: o.display } : {}) },
    args: chromiumArgs({
      extensionDir: ext,
      userDataDir,
      extra: o.extraArgs,
      headful: !!o.display,
      realPermissions: o.realPermissions,
      extraExtensions: o.extraExtensions,
    }),
  });
  let pid: number | null = null;
  let closing = false;
  let closedByItself: Date | null = null;
  context.once('close', () => {
    if (!closing) closedByItself = new Date();
  });
  return {
    context,
    userDataDir,
    async browserPid() {
      pid ??= await waitFor('the Chromium browser process in /proc', () => findBrowserPid(userDataDir), {
        timeoutMs: 5000,
      });
      return pid;
    },
    closedByItself: () => closedByItself,
    async close() {
      closing = true;
      await context.close().catch(() => {});
      if (ownsDir) rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** Chromium started as a child of the rig (its own process group), Playwright attached over CDP to its
 * default context with `noDefaults` (see LaunchOptions.realFocus). */
async function launchOverCdp(
  o: LaunchOptions & { display: string },
  ext: string | undefined,
  userDataDir: string,
  ownsDir: boolean,
): Promise<LaunchedChromium> {
  const args = chromiumArgs({
    extensionDir: ext,
    userDataDir,
    headful: true,
    realPermissions: o.realPermissions,
    extraExtensions: o.extraExtensions,
    extra: [
      `--user-data-dir=${userDataDir}`,
      '--remote-debugging-port=0',
      ...(o.extraArgs ?? []),
      'about:blank',
    ],
  });
  const child = startChild('chromium', CHROMIUM, args, join(userDataDir, 'chromium.log'), {
    env: { ...o.env, DISPLAY: o.display },
  });
  try {
    // Chromium writes the port it picked (first line) once DevTools listens.
    const portFile = join(userDataDir, 'DevToolsActivePort');
    const port = await waitFor(
      'Chromium to write DevToolsActivePort',
      () => (existsSync(portFile) && readFileSync(portFile, 'utf8').split('\n')[0]) || null,
      { timeoutMs: 30_000, check: () => assertAlive(child) },
    );
    const browser = await chromium.connectOverCDP(`http://127.0.0.1:${port}`, {
      noDefaults: true,
      isLocal: true,
    });
    const context = browser.contexts()[0];
    if (!context) throw new Error('Chromium over CDP: no default context');
    let closing = false;
    let closedByItself: Date | null = null;
    browser.once('disconnected', () => {
      if (!closing) closedByItself = new Date();
    });
    return {
      context,
      userDataDir,
      browserPid: async () =>
        waitFor('the Chromium browser process in /proc', () => findBrowserPid(userDataDir), {
          timeoutMs: 5000,
        }),
      closedByItself: () => closedByItself,
      async close() {
        closing = true;
        await browser.close().catch(() => {});
        await stopChild(child);
        if (ownsDir) rmSync(userDataDir, { recursive: true, force: true });
      },
    };
  } catch (e) {
    await stopChild(child);
    if (ownsDir) rmSync(userDataDir, { recursive: true, force: true });
    throw e;
  }
}

/** The main Chromium process of a profile: `--user-data-dir=<dir>` and no `--type=`. */
export function findBrowserPid(userDataDir: string, procRoot = '/proc'): number | null {
  for (const e of readdirSync(procRoot)) {
    if (!/^\d+$/.test(e)) continue;
    let argv: string[];
    try {
      argv = readFileSync(join(procRoot, e, 'cmdline'), 'utf8').split('\0');
    } catch {
      continue; // gone, or not ours to read
    }
    if (!argv.includes(`--user-data-dir=${userDataDir}`)) continue;
    if (argv.some((a) => a.startsWith('--type='))) continue;
    // /usr/bin/chromium is a shell wrapper that execs the binary; skip a shell still in between.
    if (/(^|\/)(ba|da)?sh$/.test(argv[0] ?? '')) continue;
    return Number(e);
  }
  return null;
}

/** The extension's MV3 service worker (it may start before or after the context is handed over). */
export async function extensionServiceWorker(context: BrowserContext, extensionId: string): Promise<Worker> {
  const prefix = `chrome-extension://${extensionId}/`;
  const existing = context.serviceWorkers().find((w) => w.url().startsWith(prefix));
  if (existing) return existing;
  return context.waitForEvent('serviceworker', {
    predicate: (w) => w.url().startsWith(prefix),
    timeout: 15_000,
  });
}

/** Is `pid` the process `ancestor` or one of its descendants (by /proc/<pid>/stat ppid)? */
export function isInTree(pid: number, ancestor: number, procRoot = '/proc'): boolean {
  for (let p = pid, hops = 0; p > 1 && hops < 64; hops++) {
    if (p === ancestor) return true;
    let stat: string;
    try {
      stat = readFileSync(join(procRoot, String(p), 'stat'), 'utf8');
    } catch {
      return false;
    }
    // comm may hold spaces and parentheses: the ppid is the 2nd field after the LAST ')'.
    p = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
  }
  return false;
}
