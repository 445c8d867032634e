// `micoff-host install --system --browser firefox --firefox-xpi X --firefox-release` on Debian's Firefox
// ESR, for real, in a private mount namespace (rig/private-mounts.ts): the policy installs micoff and
// Firefox releases the mic; `--system --uninstall` (twice) leaves the administrator's policies.json as
// it was; an administrator's own entry for micoff makes install refuse.
// Steps: docs/design/firefox-install.md#firefox-system-install-spec.
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { HOST_NAME } from '../../extension/src/shared/protocol.ts';
import type { AudioRig } from '../rig/audio-rig.ts';
import {
  type FirefoxOnProfile,
  firefoxExtensionId,
  firefoxMissing,
  startFirefoxOnProfile,
} from '../rig/firefox.ts';
import {
  addonRecord,
  createUserProfile,
  expectReachingTheHost,
  muteAndWatchRelease,
  packagedXpi,
} from '../rig/firefox-install.ts';
import { expect, test } from '../rig/fixtures.ts';
import { requireHost } from '../rig/host.ts';
import { need } from '../rig/needs.ts';
import { FIREFOX, HOST_BINARY } from '../rig/paths.ts';
import { type MountNamespace, openMountNamespace, privateMountsMissing } from '../rig/private-mounts.ts';
import type { RunResult } from '../rig/proc.ts';

const DELAY_MS = 300;
/** Past Firefox's delay: the margin micoff's own check gives (extension/src/shared/firefox-release.ts). */
const NOT_RELEASED_AFTER_MS = DELAY_MS + 2000;
const PREF = 'media.getusermedia.microphone.off_while_disabled';
/** Where `install --system` writes for Firefox (install/firefox/policies.rs POLICY_DIR and
 * LEGACY_POLICY_DIRS, install/env.rs SYSTEM_DATA_DIR, Firefox's system manifest folder, and micoff's
 * record of what it wrote, micoff-files record::SYSTEM_STATE_DIR); each is a folder of the test in
 * the namespace, and the installer's dry run must name nothing outside them. */
const SYSTEM = {
  policies: '/etc/firefox/policies',
  legacyPolicies: '/etc/firefox-esr/policies',
  data: '/usr/local/share/micoff',
  manifests: '/usr/lib/mozilla/native-messaging-hosts',
  state: '/var/lib/micoff',
};
/** Exit code of a refused policy file (EXIT_PARTIAL of native-host/crates/micoff-exit): the install
 * stops before it writes anything. */
const EXIT_PARTIAL = 3;

/** An administrator's own policies.json, formatted by hand (4 spaces, keys in their own order). */
const ADMINS = `{
    "policies": {
        "DisableTelemetry": true,
        "Preferences": {
            "browser.tabs.warnOnClose": { "Value": false, "Status": "locked" }
        },
        "ExtensionSettings": {
            "admin-tool@example.org": {
                "installation_mode": "allowed"
            }
        },
        "DisableFirefoxStudies": true
    }
}
`;

type Folders = typeof SYSTEM;

/** Firefox and the installer in one private mount namespace, for one test: its folders, a user's
 * fresh profile in a private HOME, the packaged xpi. */
interface SystemFirefox {
  /** micoff's add-on id. */
  id: string;
  local: Folders;
  policiesJson: string;
  profile: string;
  xpi: string;
  /** `micoff-host install --system --browser firefox --firefox-release --firefox-xpi <more>`. */
  install(...more: string[]): Promise<RunResult>;
  start(): Promise<FirefoxOnProfile>;
  stop(): Promise<void>;
  starts: number[];
  stops: number[];
  close(): Promise<void>;
}

/** Skips (or fails under CI) the test where Firefox ESR or private mounts are missing. */
async function systemFirefox(rig: AudioRig, prefix: string): Promise<SystemFirefox> {
  needSystemFirefox();
  const id = firefoxExtensionId();
  const dir = mkdtempSync(join(tmpdir(), prefix));
  const home = join(dir, 'home');
  mkdirSync(home);
  const env = { ...process.env, HOME: home };
  const firefoxEnv = { ...rig.clientEnv, HOME: home };
  const host = requireHost(HOST_BINARY);
  const keys = Object.keys(SYSTEM) as (keyof Folders)[];
  const local = Object.fromEntries(
    keys.map((k) => [k, join(dir, SYSTEM[k].slice(1).replaceAll('/', '-'))]),
  ) as Folders;
  let ns: MountNamespace | undefined;
  let ff: FirefoxOnProfile | undefined;
  const close = async () => {
    await ff?.stop().catch(() => {});
    await ns?.close();
    rmSync(dir, { recursive: true, force: true });
  };
  try {
    const xpi = await packagedXpi(join(dir, 'package'));
    // What the machine's folders hold shows in the namespace too (none of micoff's here).
    for (const k of keys) {
      if (existsSync(SYSTEM[k])) cpSync(SYSTEM[k], local[k], { recursive: true });
      mkdirSync(local[k], { recursive: true });
    }
    for (const f of [join(local.data, 'micoff.xpi'), join(local.manifests, `${HOST_NAME}.json`)]) {
      if (existsSync(f)) throw new Error(`${f}: the machine already has micoff installed system-wide`);
    }
    const namespace = await openMountNamespace(
      keys.map((k) => ({ system: SYSTEM[k], test: local[k] })),
      dir,
    );
    ns = namespace;
    const { profile } = await createUserProfile(home);
    const launcher = namespace.launcher(join(dir, 'firefox-in-namespace'), FIREFOX);
    const starts: number[] = [];
    const stops: number[] = [];
    const installArgs = ['install', '--system', '--browser', 'firefox', '--firefox-release', '--firefox-xpi'];
    return {
      id,
      local,
      policiesJson: join(local.policies, 'policies.json'),
      profile,
      xpi,
      install: (...more) => namespace.run(host, [...installArgs, ...more], { env, timeoutMs: 15_000 }),
      async start() {
        ff = await startFirefoxOnProfile(profile, firefoxEnv, launcher);
        starts.push(ff.startedMs);
        return ff;
      },
      async stop() {
        const running = ff;
        ff = undefined;
        if (running) stops.push(await running.stop());
      },
      starts,
      stops,
      close,
    };
  } catch (e) {
    await close();
    throw e;
  }
}

/** Both tests need Debian's Firefox ESR and a private mount namespace (root): skipped locally, failed
 * under CI, saying which is missing (e2e/rig/needs.ts). */
function needSystemFirefox(): void {
  need(firefoxMissing());
  need(privateMountsMissing());
}

test('install --system: Firefox ESR in a private mount namespace has micoff force-installed by policy, reaching the host, the release pref in effect; --uninstall leaves neither and the admin’s policies byte for byte', async ({
  rig,
  pages,
}) => {
  test.setTimeout(180_000);
  const sys = await systemFirefox(rig, 'micoff-ffsystem-');
  const { id, local, policiesJson, profile, xpi, install, start, stop, starts, stops } = sys;
  try {
    const withXpi = [xpi, '--release-delay-ms', String(DELAY_MS)];

    // The dry run names every file the installer would write: all inside the test's folders.
    const dry = await install(...withXpi, '--dry-run');
    expect(dry.code, dry.stdout + dry.stderr).toBe(0);
    const written = [...dry.stdout.matchAll(/^\S+: (\/\S+) would be /gm)].map((m) => m[1] as string);
    expect(written.length, dry.stdout).toBeGreaterThanOrEqual(3);
    for (const path of written) {
      expect(
        Object.values(SYSTEM).some((d) => path.startsWith(`${d}/`)),
        `${path} is not private`,
      ).toBe(true);
    }
    expect(readdirSync(local.data)).toEqual([]);

    // An administrator's own entry for micoff's id: install refuses that file and changes nothing in it.
    const foreign = `{"policies": {"ExtensionSettings": {"${id}": {"installation_mode": "force_installed", "install_url": "https://admin.example/micoff.xpi"}}}}\n`;
    writeFileSync(policiesJson, foreign);
    const refused = await install(...withXpi);
    expect(refused.code, refused.stdout + refused.stderr).toBe(EXIT_PARTIAL);
    expect(refused.stdout).toMatch(/policies\.json left alone: .*not written by micoff/);
    // Why nothing was installed is the command's error line, on stderr.
    expect(refused.stderr).toMatch(/^micoff-host install: nothing installed .*, settle that entry in /m);
    expect(readFileSync(policiesJson, 'utf8')).toBe(foreign);
    expect(readdirSync(local.data)).toEqual([]);
    expect(existsSync(join(local.manifests, `${HOST_NAME}.json`))).toBe(false);

    // The administrator's own policies: micoff's entries go in beside them.
    writeFileSync(policiesJson, ADMINS);
    const installed = await install(...withXpi);
    expect(installed.code, installed.stdout + installed.stderr).toBe(0);
    expect(readFileSync(join(local.data, 'micoff.xpi')).equals(readFileSync(xpi))).toBe(true);
    expect(existsSync(join(local.manifests, `${HOST_NAME}.json`))).toBe(true);
    const merged = JSON.parse(readFileSync(policiesJson, 'utf8')).policies;
    const admins = JSON.parse(ADMINS).policies;
    for (const [k, v] of Object.entries(admins)) {
      if (typeof v !== 'object') expect(merged[k]).toEqual(v);
      else for (const [kk, vv] of Object.entries(v as object)) expect(merged[k][kk]).toEqual(vv);
    }
    expect(merged.ExtensionSettings[id]).toEqual({
      installation_mode: 'force_installed',
      install_url: `file://${SYSTEM.data}/micoff.xpi`,
    });
    expect(merged.Preferences[`${PREF}.enabled`]).toEqual({ Value: true, Status: 'default' });
    expect(merged.Preferences[`${PREF}.delay_ms`]).toEqual({ Value: DELAY_MS, Status: 'default' });

    // Firefox on a fresh profile: micoff installed by the policy from micoff's copy, reaching the host
    // through the system manifest, and Firefox's release in effect.
    const first = await start();
    const reached = await expectReachingTheHost(first, id);
    expect(reached.hostArgv).toContain(`${SYSTEM.manifests}/${HOST_NAME}.json`);
    const releasedMs = await muteAndWatchRelease(first, rig, pages, DELAY_MS, DELAY_MS + 5000);
    expect(releasedMs, 'Firefox’s record stream left the server after the mute').not.toBeNull();
    await stop();
    expect(addonRecord(profile, id)).toMatchObject({
      active: true,
      location: 'app-profile',
      sourceURI: `file://${SYSTEM.data}/micoff.xpi`,
      installTelemetryInfo: { source: 'enterprise-policy' },
    });
    const profileCopy = join(profile, 'extensions', `${id}.xpi`);
    expect(readFileSync(profileCopy).equals(readFileSync(xpi)), 'Firefox installed the packaged xpi').toBe(
      true,
    );

    // Uninstall: the release prefs go, micoff's add-on entry now blocks micoff, its copy and the host
    // manifest go.
    const removed = await install('--uninstall');
    expect(removed.code, removed.stdout + removed.stderr).toBe(0);
    expect(removed.stdout).toContain('run this again');
    const blocked = JSON.parse(readFileSync(policiesJson, 'utf8')).policies;
    expect(blocked.ExtensionSettings[id]).toEqual({ installation_mode: 'blocked' });
    expect(Object.keys(blocked.Preferences)).toEqual(Object.keys(admins.Preferences));
    expect(existsSync(join(local.data, 'micoff.xpi'))).toBe(false);
    expect(existsSync(join(local.manifests, `${HOST_NAME}.json`))).toBe(false);

    // Next start: Firefox removes micoff, and its release is off again.
    const after = await start();
    const stillReleased = await muteAndWatchRelease(after, rig, pages, DELAY_MS, NOT_RELEASED_AFTER_MS);
    await stop();
    expect(stillReleased, 'the record stream stays after a mute: the release pref is gone').toBeNull();
    expect(addonRecord(profile, id)).toBeUndefined();
    expect(existsSync(profileCopy)).toBe(false);
    expect(readFileSync(join(profile, 'prefs.js'), 'utf8')).not.toContain(PREF);

    // The second uninstall takes the block out: the administrator's file as it was, byte for byte.
    const again = await install('--uninstall');
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(readFileSync(policiesJson, 'utf8')).toBe(ADMINS);
    expect(readdirSync(local.data)).toEqual([]);
    console.log(
      `firefox-system-install: ${reached.pill} (host pid ${reached.hostPid}); record stream gone ${releasedMs} ms after mute ` +
        `(delay ${DELAY_MS} ms); Firefox start ${starts.join('/')} ms, stop ${stops.join('/')} ms`,
    );
  } finally {
    await sys.close();
  }
});

// What Firefox ESR itself does, on which the installer's design rests: it reads policies.json from
// /etc/firefox/policies only (Debian's /etc/firefox-esr/policies is not read: micoff cleans up what it
// once wrote there), and it keeps an add-on whose force-install entry is simply removed (so uninstall
// blocks micoff's add-on first).
test('Firefox ESR reads /etc/firefox/policies, not /etc/firefox-esr/policies, and keeps an add-on whose force-install entry is removed', async ({
  rig,
  pages,
}) => {
  test.setTimeout(180_000);
  const sys = await systemFirefox(rig, 'micoff-ffpolicy-');
  const { id, local, policiesJson, profile, xpi, install, start, stop } = sys;
  try {
    const installed = await install(xpi, '--release-delay-ms', String(DELAY_MS));
    expect(installed.code, installed.stdout + installed.stderr).toBe(0);
    const micoffs = readFileSync(policiesJson, 'utf8');
    // micoff's policies in Debian's /etc/firefox-esr/policies only: neither the add-on nor the pref.
    renameSync(policiesJson, join(local.legacyPolicies, 'policies.json'));
    const unread = await start();
    const released = await muteAndWatchRelease(unread, rig, pages, DELAY_MS, NOT_RELEASED_AFTER_MS);
    await stop();
    expect(released, 'the release pref of /etc/firefox-esr/policies in effect').toBeNull();
    expect(addonRecord(profile, id), 'micoff installed from /etc/firefox-esr/policies').toBeUndefined();
    // In /etc/firefox/policies: installed and running.
    renameSync(join(local.legacyPolicies, 'policies.json'), policiesJson);
    await expectReachingTheHost(await start(), id);
    await stop();
    expect(addonRecord(profile, id)).toMatchObject({ active: true });
    // The force-install entry removed (the release prefs kept): Firefox keeps micoff, running.
    const withoutEntry = JSON.parse(micoffs);
    delete withoutEntry.policies.ExtensionSettings;
    writeFileSync(policiesJson, JSON.stringify(withoutEntry));
    const kept = await expectReachingTheHost(await start(), id);
    await stop();
    expect(addonRecord(profile, id)).toMatchObject({ active: true, location: 'app-profile' });
    console.log(
      `firefox-system-install: /etc/firefox-esr/policies not read; add-on kept after its entry went (${kept.pill})`,
    );
  } finally {
    await sys.close();
  }
});
