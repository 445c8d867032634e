// `micoff-host install --chromium-crx` on Debian's Chromium: the installer registers the crx and the
// host manifest, Chromium started without --load-extension installs micoff from the crx, `--uninstall`
// removes it. Packed with a throwaway key (`npm run package -- --own-key`), so the host answers
// "forbidden", which proves it found the installer's manifest.
// Why: docs/design/packaging.md#chromium-install-spec.
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type BrowserContext, chromium } from '@playwright/test';
import { HOST_NAME } from '../../extension/src/shared/protocol.ts';
import { chromiumArgs, chromiumMissing, extensionServiceWorker, findBrowserPid } from '../rig/chromium.ts';
import { expect, test } from '../rig/fixtures.ts';
import { requireHost } from '../rig/host.ts';
import { need } from '../rig/needs.ts';
import { CHROMIUM, HOST_BINARY, ROOT } from '../rig/paths.ts';
import { run, waitFor } from '../rig/proc.ts';
import { ExtensionWorker } from '../rig/service-worker.ts';

test('install --chromium-crx: Chromium without --load-extension installs micoff from the crx under the unpacked build’s id; --uninstall removes it', async ({
  rig,
  audioServer,
}) => {
  test.skip(audioServer !== 'pulseaudio', 'the install does not depend on the audio server: run once');
  need(chromiumMissing());
  const home = mkdtempSync(join(tmpdir(), 'micoff-crx-'));
  // The user's own XDG folders: the installer and Chromium find the same ~/.config/chromium.
  const userEnv = {
    HOME: home,
    XDG_CONFIG_HOME: join(home, '.config'),
    XDG_DATA_HOME: join(home, '.local', 'share'),
  };
  const userDataDir = join(home, '.config', 'chromium'); // Chromium's default for this HOME
  const host = requireHost(HOST_BINARY);
  let context: BrowserContext | undefined;
  const launch = async () => {
    context = await chromium.launchPersistentContext(userDataDir, {
      executablePath: CHROMIUM,
      headless: true,
      // Started as a user starts it: Playwright's switches that turn extensions (and external
      // extensions, --disable-default-apps) off are dropped; no --load-extension is added.
      ignoreDefaultArgs: ['--mute-audio', '--disable-extensions', '--disable-default-apps'],
      env: { ...rig.clientEnv, ...userEnv },
      args: chromiumArgs({ userDataDir }),
    });
    return context;
  };
  try {
    const pem = join(home, 'throwaway.pem');
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    writeFileSync(pem, privateKey.export({ type: 'pkcs8', format: 'pem' }), { mode: 0o600 });
    const out = join(home, 'package');
    const packed = await run(
      process.execPath,
      [
        join(ROOT, 'scripts', 'package.mjs'),
        '--no-build',
        `--crx-key=${pem}`,
        '--own-key',
        `--out-dir=${out}`,
        '--no-xpi',
      ],
      { timeoutMs: 30_000 },
    );
    expect(packed.code, packed.stdout + packed.stderr).toBe(0);
    const unpackedId = readFileSync(join(out, 'chrome', 'extension-id.txt'), 'utf8').trim();
    const version = JSON.parse(readFileSync(join(out, 'chrome', 'manifest.json'), 'utf8')).version;
    const crx = join(out, `micoff-${version}.crx`);

    const installArgs = ['install', '--browser', 'chromium', '--chromium-crx'];
    const refused = await run(host, [...installArgs, crx], { env: { ...process.env, ...userEnv } });
    expect(refused.code, 'a crx of another key is refused by default').toBe(2);
    const installed = await run(host, [...installArgs, crx, '--allow-other-key'], {
      env: { ...process.env, ...userEnv },
    });
    expect(installed.code, installed.stdout + installed.stderr).toBe(0);
    // The id the installer read from the crx's signed header is the unpacked build's.
    expect(installed.stdout).toContain(`(micoff ${version}, id ${unpackedId})`);
    const hostManifest = join(userDataDir, 'NativeMessagingHosts', `${HOST_NAME}.json`);
    expect(existsSync(hostManifest)).toBe(true);
    expect(existsSync(join(userDataDir, 'External Extensions', `${unpackedId}.json`))).toBe(true);

    const started = Date.now();
    const browser = await launch();
    const worker = await extensionServiceWorker(browser, unpackedId);
    const installedMs = Date.now() - started;
    expect(worker.url()).toBe(`chrome-extension://${unpackedId}/background.js`);
    const pid = await waitFor('the Chromium browser process', () => findBrowserPid(userDataDir));
    // Debian's /usr/bin/chromium adds `--load-extension=<entries of /usr/share/chromium/extensions>`,
    // empty here: nothing is loaded that way.
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    const loading = argv.filter(
      (a) =>
        a.startsWith('--disable-extensions') ||
        (a.startsWith('--load-extension') && a !== '--load-extension='),
    );
    expect(loading).toEqual([]);
    // The extension's connectNative reached the manifest the installer wrote: Chromium applied its
    // allowed_origins (micoff's id only) rather than finding no manifest.
    const ext = new ExtensionWorker(worker);
    const status = await waitFor('Chromium’s answer to connectNative', async () => {
      const s = await ext.hostStatus();
      return s.message ? s : null;
    });
    expect(status.message).toMatch(/native messaging host is forbidden/);
    console.log(
      `chromium-install: ${unpackedId} running ${installedMs} ms after launch; host: ${status.message}`,
    );
    // Chromium unpacked the crx into the profile: the folder the uninstall check below waits to see go.
    const installedDir = join(userDataDir, 'Default', 'Extensions', unpackedId);
    await waitFor('micoff’s files in the profile', () => (existsSync(installedDir) ? true : null), {
      timeoutMs: 15_000,
    });
    await browser.close();
    context = undefined;

    const removed = await run(host, [...installArgs, '--uninstall'], {
      env: { ...process.env, ...userEnv },
    });
    expect(removed.code, removed.stdout + removed.stderr).toBe(0);
    expect(existsSync(join(userDataDir, 'External Extensions', `${unpackedId}.json`))).toBe(false);
    expect(existsSync(join(userEnv.XDG_DATA_HOME, 'micoff', 'micoff.crx'))).toBe(false);
    expect(existsSync(hostManifest)).toBe(false);
    // The next start uninstalls it: its files go from the profile.
    await launch();
    await waitFor(
      'Chromium to remove micoff at the start after --uninstall',
      () => (existsSync(installedDir) ? null : true),
      { timeoutMs: 15_000 },
    );
  } finally {
    await context?.close().catch(() => {});
    rmSync(home, { recursive: true, force: true });
  }
});
