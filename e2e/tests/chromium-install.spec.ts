// The README's Chromium install, followed literally, without micoff's release key: `npm run package`'s
// crx signed with a local key, the README's `chromium` block run line by line on a fresh HOME,
// Debian's Chromium started WITHOUT --load-extension installs micoff from the crx, reaches the
// installed host, and a mute releases / an unmute reacquires the microphone; `micoff-host uninstall`
// brings the HOME back as it was in what micoff touches. Why: docs/design/packaging.md#chromium-install-spec.
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, dirname, join, relative } from 'node:path';
import { type BrowserContext, chromium } from '@playwright/test';
import { HOST_NAME } from '../../extension/src/shared/protocol.ts';
import { chromiumArgs, chromiumMissing, extensionServiceWorker, findBrowserPid } from '../rig/chromium.ts';
import { expect, test } from '../rig/fixtures.ts';
import { requireHost } from '../rig/host.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { need } from '../rig/needs.ts';
import { CHROMIUM, HOST_BINARY, ROOT } from '../rig/paths.ts';
import { run, waitFor } from '../rig/proc.ts';
import { readmeBlock } from '../rig/readme.ts';
import { ExtensionWorker } from '../rig/service-worker.ts';
import { setReleaseSettings, whenStreams } from './release-util.ts';

/** Files in the HOME that are not micoff's: Chromium's own (its profile, caches, NSS database) and
 * libpulse's cookie, which every PulseAudio client writes (Chromium's capture is one). micoff's two
 * folders inside the profile stay compared. */
function notMicoffs(path: string): boolean {
  const micoffs = ['.config/chromium/NativeMessagingHosts', '.config/chromium/External Extensions'];
  if (micoffs.some((m) => path === m || path.startsWith(`${m}/`))) return false;
  return ['.config/chromium', '.cache', '.pki', '.config/pulse'].some(
    (c) => path === c || path.startsWith(`${c}/`),
  );
}

/** Every file and folder under `home` but those not micoff's, with a file's sha256 and mode. */
function snapshot(home: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (dir: string) => {
    for (const name of readdirSync(dir).sort()) {
      const p = join(dir, name);
      const rel = relative(home, p);
      if (notMicoffs(rel)) continue;
      const st = statSync(p);
      if (st.isDirectory()) {
        out[`${rel}/`] = (st.mode & 0o7777).toString(8);
        walk(p);
      } else {
        const sha = createHash('sha256').update(readFileSync(p)).digest('hex');
        out[rel] = `${(st.mode & 0o7777).toString(8)} ${sha}`;
      }
    }
  };
  walk(home);
  return out;
}

test('README install for Chromium without the release key: the local-key crx installs, reaches the host, releases and reacquires; uninstall leaves the HOME as before', async ({
  rig,
  pages,
  audioServer,
}) => {
  test.skip(audioServer !== 'pulseaudio', 'the install does not depend on the audio server: run once');
  need(chromiumMissing());
  const host = requireHost(HOST_BINARY);
  const temp = mkdtempSync(join(tmpdir(), 'micoff-readme-chromium-'));
  const home = join(temp, 'home');
  const checkout = join(temp, 'checkout'); // the README's working directory: it holds dist/
  const keys = join(temp, 'keys'); // the local key's config home: empty, no release key anywhere
  // A fresh user: HOME only (the XDG folders are its defaults), micoff-host on PATH, no release key.
  const userEnv: NodeJS.ProcessEnv = { ...process.env, HOME: home };
  for (const v of ['XDG_CONFIG_HOME', 'XDG_DATA_HOME', 'XDG_STATE_HOME', 'MICOFF_CRX_KEY']) delete userEnv[v];
  userEnv.PATH = [dirname(host), process.env.PATH ?? ''].join(delimiter);
  const userDataDir = join(home, '.config', 'chromium'); // Chromium's default for this HOME
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
    // The packaging's crx, as `npm run package` makes it without the release key (from this build).
    const pack = () =>
      run(
        process.execPath,
        [
          join(ROOT, 'scripts', 'package.mjs'),
          '--no-build',
          '--no-xpi',
          `--out-dir=${join(checkout, 'dist')}`,
        ],
        { env: { ...userEnv, HOME: temp, XDG_CONFIG_HOME: keys }, timeoutMs: 30_000 },
      );
    const packed = await pack();
    expect(packed.code, packed.stdout + packed.stderr).toBe(0);
    const id = /signed with this machine's local key .* \(made now\): extension id ([a-p]{32})/.exec(
      packed.stdout,
    )?.[1];
    expect(id, packed.stdout).toBeTruthy();
    const again = await pack();
    expect(again.stdout, 'the local key is kept and reused').toContain(
      `(kept from an earlier run): extension id ${id}`,
    );
    const localId = id as string;

    // The user's own files where micoff writes: another host's manifest, which must stay as it is.
    const theirs = join(userDataDir, 'NativeMessagingHosts', 'com.example.other.json');
    mkdirSync(dirname(theirs), { recursive: true });
    writeFileSync(theirs, '{"name": "com.example.other", "path": "/usr/bin/true", "type": "stdio"}\n');
    // The README's Chromium block, line by line, in the checkout, as the fresh user.
    const before = snapshot(home);
    for (const line of readmeBlock('chromium')) {
      const r = await run('bash', ['-c', line], { env: userEnv, cwd: checkout });
      expect(r.code, `${line}\n${r.stdout}${r.stderr}`).toBe(0);
      expect(r.stdout).toContain(`id ${localId}`);
    }
    const hostManifest = JSON.parse(
      readFileSync(join(userDataDir, 'NativeMessagingHosts', `${HOST_NAME}.json`), 'utf8'),
    );
    expect(hostManifest.allowed_origins).toContain(`chrome-extension://${localId}/`);

    const started = Date.now();
    const browser = await launch();
    const worker = await extensionServiceWorker(browser, localId);
    const installedMs = Date.now() - started;
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
    // The installed host answers the local id: connected, and its audio view reaches the extension.
    const ext = new ExtensionWorker(worker);
    const status = await ext.waitHostConnected();

    await setReleaseSettings(worker, { releaseOnMute: true, releaseDelayMs: 0 });
    const meeting = await MeetingPage.open(browser, pages.url('meeting.html'));
    await meeting.ready();
    await whenStreams(rig, 'the call capturing', (n) => n >= 1);
    await ext.waitAudio('the host’s view of Chromium’s record stream', (s) =>
      s.streams.some((x) => x.kind === 'record'),
    );
    await meeting.mute();
    await whenStreams(rig, 'the microphone released on mute', (n) => n === 0, 2000);
    await meeting.unmute();
    await whenStreams(rig, 'the microphone reacquired on unmute', (n) => n >= 1, 2000);
    console.log(
      `chromium-install: ${localId} running ${installedMs} ms after launch; host ${status.version?.host_version}`,
    );
    // Chromium unpacked the crx into the profile: the folder the uninstall check below waits to see go.
    const installedDir = join(userDataDir, 'Default', 'Extensions', localId);
    expect(existsSync(installedDir)).toBe(true);
    await browser.close();
    context = undefined;

    // The README's uninstall for what the user installed (the package's `apt purge` is not this test's).
    const uninstall = readmeBlock('uninstall').filter((l) => l.startsWith('micoff-host '));
    expect(uninstall).toEqual(['micoff-host uninstall']);
    for (const line of uninstall) {
      const r = await run('bash', ['-c', line], { env: userEnv, cwd: checkout });
      expect(r.code, `${line}\n${r.stdout}${r.stderr}`).toBe(0);
    }
    expect(snapshot(home)).toEqual(before);
    // The next start uninstalls micoff from the profile.
    await launch();
    await waitFor(
      'Chromium to remove micoff at the start after the uninstall',
      () => (existsSync(installedDir) ? null : true),
      { timeoutMs: 15_000 },
    );
  } finally {
    await context?.close().catch(() => {});
    rmSync(temp, { recursive: true, force: true });
  }
});
