// The micoff-host .deb installed, upgraded, removed and purged for real without changing the machine:
// dpkg, Chromium and Firefox ESR run in a private mount namespace whose /usr, /etc and /var are
// overlays (rig/private-mounts.ts), so the overlays' upper layers are everything that changed.
// What each step checks: docs/design/packaging.md#deb-package-spec.
import {
  chmodSync,
  copyFileSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  readlinkSync,
  rmdirSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { HOST_NAME, type Version } from '../../extension/src/shared/protocol.ts';
import type { AudioRig } from '../rig/audio-rig.ts';
import {
  chromiumMissing,
  extensionServiceWorker,
  type LaunchedChromium,
  launchChromium,
} from '../rig/chromium.ts';
import {
  debField,
  debPaths,
  debToolsMissing,
  PACKAGED_HOST,
  PACKAGED_MANIFESTS,
  packagedDeb,
  rebuiltDeb,
} from '../rig/deb.ts';
import {
  type FirefoxOnProfile,
  firefoxExtensionId,
  firefoxMissing,
  startFirefoxOnProfile,
} from '../rig/firefox.ts';
import { createUserProfile, expectReachingTheHost } from '../rig/firefox-install.ts';
import { expect, test } from '../rig/fixtures.ts';
import { extensionId, requireHost } from '../rig/host.ts';
import { need } from '../rig/needs.ts';
import {
  type Allowed,
  changes,
  entryAt,
  type Overlay,
  overlayViews,
  upperEntries,
} from '../rig/overlay-changes.ts';
import { CHROMIUM, FIREFOX, FIREFOX_EXTENSION_DIR } from '../rig/paths.ts';
import { type MountNamespace, openMountNamespace, privateMountsMissing } from '../rig/private-mounts.ts';
import { ExtensionWorker } from '../rig/service-worker.ts';

/** Where dpkg writes: the package's files, its database, its log, the triggers' caches. */
const OVERLAID = ['/usr', '/etc', '/var'];
const MANIFESTS = Object.values(PACKAGED_MANIFESTS);
const {
  chromium: CHROMIUM_MANIFEST,
  chrome: CHROME_MANIFEST,
  firefox: FIREFOX_MANIFEST,
} = PACKAGED_MANIFESTS;
/** Another host's manifest, placed by an administrator: dpkg must never touch it. */
const ADMINS_MANIFEST = '/etc/chromium/native-messaging-hosts/org.example.other.json';
const ADMINS_JSON =
  '{"name":"org.example.other","path":"/opt/other/host","type":"stdio","allowed_origins":[]}\n';
/** What the newer build leaves out: dpkg must remove it at the upgrade. */
const DROPPED = '/usr/share/man/man1/micoff-host-top.1.gz';

/** dpkg wants the sbin folders in PATH (ldconfig, start-stop-daemon), as root's login shell has them. */
const dpkgEnv = { ...process.env, PATH: '/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' };

/** Where the package's maintainer script (the preinst) writes, beside the files it lists. */
const PREINST_TARGETS = ['/etc/opt'];
/** What dpkg keeps of the package itself (its file list, md5sums, scripts). */
const DPKG_INFO = '/var/lib/dpkg/info/micoff-host.';

/**
 * What the test compares: only what the code under test can touch, the files the packages list (and
 * their folders), the preinst's targets and dpkg's records of the package. Anything else (e.g. the
 * fontconfig cache the browsers in the namespace write on a machine that had none) is the machine's.
 */
function packagesReach(debs: string[]): Allowed {
  const reach = new Set([...PREINST_TARGETS, ...debs.flatMap(debPaths)]);
  return (path) => {
    if (reach.has(path) || path.startsWith(DPKG_INFO)) return null;
    // dpkg's own files (its database, compared whole below; its log and locks), man-db's trigger
    // cache, and the machine's caches.
    return 'outside what the package lists or its maintainer script writes';
  };
}

/** The host Chromium started for micoff: its `version` answer and the binary it runs. */
async function chromiumsHost(browser: LaunchedChromium): Promise<{ version: Version; exe: string }> {
  const worker = await extensionServiceWorker(browser.context, extensionId());
  const status = await new ExtensionWorker(worker).waitHostConnected();
  if (!status.version) throw new Error(`connected without a version answer: ${JSON.stringify(status)}`);
  return { version: status.version, exe: readlinkSync(`/proc/${status.version.pid}/exe`) };
}

/** Chromium in the namespace with the unpacked build, on `userDataDir` as it is (no manifest written
 * by the test): the host it reaches. */
async function chromiumReaches(rig: AudioRig, launcher: string, userDataDir: string) {
  const browser = await launchChromium({
    env: rig.clientEnv,
    executablePath: launcher,
    withHost: false,
    userDataDir,
  });
  try {
    return await chromiumsHost(browser);
  } finally {
    await browser.close();
  }
}

/** Firefox ESR in the namespace on a fresh profile of `home`, micoff loaded as a temporary add-on:
 * the host it started (its argv names the manifest Firefox used). */
async function firefoxReaches(rig: AudioRig, launcher: string, home: string) {
  const { profile } = await createUserProfile(home);
  let ff: FirefoxOnProfile | undefined;
  try {
    ff = await startFirefoxOnProfile(profile, { ...rig.clientEnv, HOME: home }, launcher);
    await ff.browser.installExtension(FIREFOX_EXTENSION_DIR);
    return await expectReachingTheHost(ff, firefoxExtensionId());
  } finally {
    await ff?.stop();
  }
}

/** The lines of `micoff-host doctor` that say which manifest each browser uses. */
async function doctorsManifests(ns: MountNamespace, host: string, env: NodeJS.ProcessEnv): Promise<string[]> {
  const doctor = await ns.run(host, ['doctor', '--json'], { env, timeoutMs: 30_000 });
  const finding = JSON.parse(doctor.stdout).findings.find(
    (f: { id: string }) => f.id === 'native_messaging',
  ) as { details: string[] } | undefined;
  if (!finding) throw new Error(`doctor has no native_messaging finding:\n${doctor.stdout}${doctor.stderr}`);
  return finding.details;
}

test('the .deb in a private namespace: Chromium and Firefox reach its host through the system manifests; a user’s own install keeps working and wins, as doctor says; upgrade, remove and purge leave the machine as before and an administrator’s manifest untouched', async ({
  rig,
  audioServer,
}) => {
  test.skip(audioServer !== 'pulseaudio', 'the package does not depend on the audio server: run once');
  need(privateMountsMissing());
  need(debToolsMissing());
  need(chromiumMissing());
  need(firefoxMissing());
  test.setTimeout(120_000);
  const t0 = Date.now();
  const took: string[] = [];
  const lap = (what: string) => took.push(`${what} ${((Date.now() - t0) / 1000).toFixed(1)} s`);
  const dir = mkdtempSync(join(tmpdir(), 'micoff-deb-'));
  let ns: MountNamespace | undefined;
  try {
    if (entryAt('/var/lib/dpkg/info/micoff-host.list'))
      throw new Error(
        'micoff-host is installed on this machine: the test installs it as new (dpkg -r it first)',
      );
    const deb = await packagedDeb(join(dir, 'package'));
    const version = debField(deb, 'Version');
    const [, upstream, revision] = /^(.+)-(\d+)$/.exec(version) ?? [];
    if (!upstream || !revision) throw new Error(`${deb}: Version ${version} is not <upstream>-<revision>`);
    const newer = await rebuiltDeb(deb, {
      revision: String(Number(revision) + 1),
      drop: [DROPPED],
      outDir: join(dir, 'newer'),
    });
    const newerVersion = debField(newer, 'Version');
    const notMicoffs = packagesReach([deb, newer]);
    lap('packed');

    const namespace = await openMountNamespace([], dir, { overlays: OVERLAID });
    ns = namespace;
    const overlays: Overlay[] = OVERLAID.map((system) => ({
      system,
      upper: namespace.upperOf(system),
      merged: namespace.inside(system),
    }));
    const views = overlayViews(overlays);
    const dpkg = async (...args: string[]) => {
      const r = await namespace.run('dpkg', args, { env: dpkgEnv, timeoutMs: 60_000 });
      expect(r.code, `dpkg ${args.join(' ')}:\n${r.stdout}${r.stderr}`).toBe(0);
      return r;
    };
    const showVersion = ['-W', `-f=\${Version}`, 'micoff-host']; // dpkg-query's field, not a template
    const installedVersion = async () => (await namespace.run('dpkg-query', showVersion)).stdout;

    // Before the package: the administrator's manifest, and the user's own install (the host in
    // ~/.local/bin, its manifests for Chromium and Firefox, written by its installer).
    mkdirSync(dirname(namespace.inside(ADMINS_MANIFEST)), { recursive: true });
    writeFileSync(namespace.inside(ADMINS_MANIFEST), ADMINS_JSON);
    const home = join(dir, 'home');
    const userEnv = {
      ...process.env,
      HOME: home,
      XDG_CONFIG_HOME: join(home, '.config'),
      XDG_DATA_HOME: join(home, '.local', 'share'),
      XDG_STATE_HOME: join(home, '.local', 'state'),
    };
    const userHost = join(home, '.local', 'bin', 'micoff-host');
    mkdirSync(dirname(userHost), { recursive: true });
    copyFileSync(requireHost(), userHost);
    chmodSync(userHost, 0o755);
    const userInstall = await namespace.run(
      userHost,
      ['install', '--browser', 'chromium', '--browser', 'firefox'],
      {
        env: userEnv,
      },
    );
    expect(userInstall.code, userInstall.stdout + userInstall.stderr).toBe(0);
    const usersChromiumDir = join(home, '.config', 'chromium');
    const usersManifests = [
      join(usersChromiumDir, 'NativeMessagingHosts', `${HOST_NAME}.json`),
      join(home, '.mozilla', 'native-messaging-hosts', `${HOST_NAME}.json`),
    ];
    const usersFiles = () => [userHost, ...usersManifests].map((p) => entryAt(p));
    const usersBefore = usersFiles();
    const untouched = (step: string) => {
      expect(readFileSync(namespace.inside(ADMINS_MANIFEST), 'utf8'), `${step}: the admin’s manifest`).toBe(
        ADMINS_JSON,
      );
      expect(usersFiles(), `${step}: the user’s own install`).toEqual(usersBefore);
    };
    const before = upperEntries(overlays);
    const asBefore = (step: string) => {
      expect(
        changes(before, upperEntries(overlays), views, notMicoffs),
        `${step}: what differs from before`,
      ).toEqual([]);
      // dpkg forgot the package. (A dpkg run on the machine itself during the test shows here too.)
      expect(
        readFileSync(namespace.inside('/var/lib/dpkg/status')).equals(readFileSync('/var/lib/dpkg/status')),
        `${step}: dpkg’s database is the machine’s`,
      ).toBe(true);
    };

    // Install.
    await dpkg('-i', deb);
    expect(await installedVersion()).toBe(version);
    for (const m of MANIFESTS) {
      // Read inside: the /etc entries are links to an absolute path of the namespace.
      const manifest = await namespace.run('cat', [m]);
      expect(manifest.code, `${m}: ${manifest.stderr}`).toBe(0);
      expect(JSON.parse(manifest.stdout).path, m).toBe(PACKAGED_HOST);
    }
    const hostVersion = await namespace.run(PACKAGED_HOST, ['--version']);
    expect(hostVersion.stdout.trim()).toBe(`micoff-host ${upstream}`);
    const manPage = await namespace.run('man', ['-w', 'micoff-host-doctor']);
    expect(manPage.stdout.trim()).toBe('/usr/share/man/man1/micoff-host-doctor.1.gz');
    untouched('dpkg -i');
    lap('installed');

    // Both installs there: the doctor says each browser uses the user's manifest.
    const both = await doctorsManifests(namespace, PACKAGED_HOST, userEnv);
    expect(both).toContain(
      `Chromium: uses ${usersManifests[0]} (user): works; also ${CHROMIUM_MANIFEST} (package), not used`,
    );
    expect(both).toContain(
      `Firefox: uses ${usersManifests[1]} (user): works; also ${FIREFOX_MANIFEST} (package), not used`,
    );

    // The browsers: through the system manifests to the package's host, and for the user to theirs.
    const chromiumLauncher = namespace.launcher(join(dir, 'chromium-in-namespace'), CHROMIUM);
    const firefoxLauncher = namespace.launcher(join(dir, 'firefox-in-namespace'), FIREFOX);
    const systemChromium = await chromiumReaches(rig, chromiumLauncher, join(dir, 'chromium-fresh'));
    expect(systemChromium.exe).toBe(PACKAGED_HOST);
    expect(systemChromium.version.host_version).toBe(upstream);
    const usersChromium = await chromiumReaches(rig, chromiumLauncher, usersChromiumDir);
    expect(usersChromium.exe).toBe(userHost);
    lap('Chromium');
    const systemFirefox = await firefoxReaches(rig, firefoxLauncher, join(dir, 'firefox-home'));
    expect(systemFirefox.hostArgv[0]).toBe(PACKAGED_HOST);
    expect(systemFirefox.hostArgv).toContain(FIREFOX_MANIFEST);
    expect(systemFirefox.pill).toContain(`host ${upstream}`);
    const usersFirefox = await firefoxReaches(rig, firefoxLauncher, home);
    expect(usersFirefox.hostArgv[0]).toBe(userHost);
    expect(usersFirefox.hostArgv).toContain(usersManifests[1]);
    lap('Firefox');

    // Upgrade to the newer build.
    await dpkg('-i', newer);
    expect(await installedVersion()).toBe(newerVersion);
    expect(entryAt(namespace.inside(DROPPED)), `${DROPPED}, gone from the newer build`).toBeNull();
    untouched('upgrade');

    // Remove, then purge: as before, and the user's install still the one the browsers use.
    await dpkg('-r', 'micoff-host');
    asBefore('dpkg -r');
    untouched('dpkg -r');
    const usersOnly = await doctorsManifests(namespace, userHost, userEnv);
    expect(usersOnly).toContain(`Chromium: uses ${usersManifests[0]} (user): works`);
    expect(usersOnly).toContain(`Firefox: uses ${usersManifests[1]} (user): works`);
    await dpkg('-P', 'micoff-host');
    expect(await installedVersion()).toBe('');
    asBefore('dpkg -P');
    untouched('dpkg -P');
    lap('upgraded, removed, purged');

    // Where someone removed /etc/opt (base-files makes it, the package does not list it): the
    // preinst makes it again for /etc/opt/chrome/, and it stays after purge, as base-files wants it.
    if (entryAt(namespace.inside('/etc/opt'))) rmdirSync(namespace.inside('/etc/opt'));
    const withoutOpt = upperEntries(overlays);
    await dpkg('-i', deb);
    expect(entryAt(namespace.inside(CHROME_MANIFEST))?.kind).toBe('link');
    await dpkg('-P', 'micoff-host');
    expect(changes(withoutOpt, upperEntries(overlays), views, notMicoffs)).toEqual([
      expect.stringMatching(
        /^(changed \/etc\/opt: was removed, now dir 0755 0:0|added \/etc\/opt \(dir 0755 0:0\))$/,
      ),
    ]);
    lap('without /etc/opt');
    console.log(
      `deb-package: ${version} -> ${newerVersion}; Chromium's host ${systemChromium.exe} (pid ${systemChromium.version.pid}), ` +
        `Firefox's ${systemFirefox.pill}; ${took.join(', ')}`,
    );
  } finally {
    await ns?.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
