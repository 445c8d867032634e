// Capture latency set from the extension, for real, on both servers: the options page (or an
// administrator's managed policy) through the background and micoff-host `latency_set` to Chromium's
// record stream granted >= 35 ms, shown in the popup; and back to 10 ms. Private HOME and XDG folders;
// the policy case in a private mount namespace.
// Details: docs/design/capture-latency.md#capture-latency-options-spec.
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Page } from '@playwright/test';
import type { LatencyStatus } from '../../extension/src/shared/protocol.ts';
import type { AudioRig } from '../rig/audio-rig.ts';
import {
  browserEnv,
  desktopCopy,
  type LatencyXdg,
  latencyHost,
  latencyXdg,
  serverGrantUs,
} from '../rig/capture-latency.ts';
import { extensionServiceWorker, type LaunchedChromium, launchChromium } from '../rig/chromium.ts';
import { expect, test } from '../rig/fixtures.ts';
import { extensionId } from '../rig/host.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { need } from '../rig/needs.ts';
import type { PageServer } from '../rig/page-server.ts';
import { CHROMIUM } from '../rig/paths.ts';
import { openMountNamespace, privateMountsMissing } from '../rig/private-mounts.ts';
import { waitFor, which } from '../rig/proc.ts';
import { tabIdOf } from './release-util.ts';

test.use({ rigOptions: { reader: false } });

const MS = 1000;
const RULE = ['pipewire', 'pipewire-pulse.conf.d', '50-micoff-capture-latency.conf'];

/** One browser session of the test: a private profile reused across the restarts. */
class Session {
  browser: LaunchedChromium | null = null;
  readonly profile: string;
  readonly host: ReturnType<typeof latencyHost>;

  constructor(
    readonly rig: AudioRig,
    readonly pages: PageServer,
    readonly xdg: LatencyXdg,
    dir: string,
    readonly executablePath?: string,
  ) {
    this.profile = join(dir, 'profile');
    this.host = latencyHost(rig, xdg);
  }

  /** Chromium as its menu entry would start it now (micoff's desktop entry copy, when there is one). */
  async launch(): Promise<LaunchedChromium> {
    this.browser = await launchChromium({
      env: { ...browserEnv(this.rig, this.xdg), ...this.xdg },
      userDataDir: this.profile,
      executablePath: this.executablePath,
    });
    return this.browser;
  }

  get context() {
    if (!this.browser) throw new Error('no browser');
    return this.browser.context;
  }

  async options(): Promise<Page> {
    const page = await this.context.newPage();
    await page.goto(`chrome-extension://${extensionId()}/options.html`);
    await expect(page.locator('#latency-configured')).toContainText(/^(pulseaudio|pipewire_pulse) /, {
      timeout: 20_000,
    });
    return page;
  }

  /** Does the restarts `names` lists (as the options page showed them): pipewire-pulse (the rig's
   * server, with no browser running), the browser (quit and started again). */
  async restart(names: string[]): Promise<void> {
    expect(names).toContain('chromium');
    await this.browser?.close();
    this.browser = null;
    if (names.includes('pipewire-pulse')) await this.rig.restart();
    await this.launch();
  }

  /** A call, and what the server grants its capture (micoff-host's view and pactl's agree). */
  async call(ok: (us: number) => boolean, what: string): Promise<{ meeting: MeetingPage; us: number }> {
    const meeting = await MeetingPage.open(this.context, this.pages.url('meeting.html'));
    await meeting.ready();
    await meeting.waitForAudioFlowing(20_000);
    let last: LatencyStatus | null = null;
    const s = await waitFor(
      what,
      async () => {
        last = await this.host<LatencyStatus>(['status']);
        const s = last.streams.find((x) => x.browser === 'chromium');
        return s && ok(s.capture_latency_us) ? s : null;
      },
      { timeoutMs: 15_000, intervalMs: 300 },
    ).catch((e: Error) => {
      throw new Error(`${e.message}\nlast status: ${JSON.stringify(last, null, 2)}`);
    });
    const server = await serverGrantUs(this.rig, s.index);
    expect(Math.abs((server ?? 0) - s.capture_latency_us), `pactl: ${server}`).toBeLessThanOrEqual(1 * MS);
    return { meeting, us: s.capture_latency_us };
  }

  /** The popup's capture-latency line for the call's tab. */
  async popupLine(meeting: MeetingPage): Promise<Page> {
    const sw = await extensionServiceWorker(this.context, extensionId());
    const tab = await tabIdOf(sw, meeting.page.url());
    const popup = await this.context.newPage();
    await popup.goto(`chrome-extension://${extensionId()}/popup.html?tab=${tab}`);
    return popup;
  }

  /** What the options page (or the background, for a managed value) made the host write. */
  files(): { copy: boolean; wrapper: boolean; rule: string | null } {
    const rule = join(this.xdg.XDG_CONFIG_HOME, ...RULE);
    return {
      copy: existsSync(desktopCopy(this.xdg)),
      wrapper: existsSync(join(this.xdg.HOME, '.local', 'bin', 'chromium')),
      rule: existsSync(rule) ? readFileSync(rule, 'utf8') : null,
    };
  }

  async cleanup(): Promise<void> {
    await this.browser?.close();
    this.browser = null;
    await this.host(['reset']).catch(() => {});
  }
}

/** The restarts the options page names after applying ("Restart needed: a, b."). */
async function namedRestarts(options: Page): Promise<string[]> {
  const result = options.locator('#latency-result');
  await expect(result).toContainText('Restart needed:', { timeout: 20_000 });
  const m = /Restart needed: ([^.]+)\./.exec((await result.textContent()) ?? '');
  return (m?.[1] ?? '').split(',').map((s) => s.trim());
}

test('options page: 40 ms through the host, granted after the restart it names, shown in the popup; back to the default', async ({
  rig,
  pages,
}) => {
  test.setTimeout(240_000);
  const dir = mkdtempSync(join(tmpdir(), 'micoff-latency-options-'));
  const session = new Session(rig, pages, latencyXdg(rig, dir), dir);
  try {
    await session.launch();
    let options = await session.options();
    await expect(options.locator('#latency-configured')).toContainText('Nothing configured');
    await expect(options.locator('#latency-select')).toBeEnabled();
    await expect(options.locator('#latency-select')).toHaveValue('default');

    // 40 ms, chosen in the real options page.
    await options.locator('#latency-select').selectOption('40');
    const restarts = await namedRestarts(options);
    await expect(options.locator('#latency-select')).toHaveValue('40');
    await expect(options.locator('#latency-configured')).toContainText('40 ms through');
    // Written by micoff's mechanism for this server, into the private folders.
    const files = session.files();
    if (rig.kind === 'pulseaudio') {
      expect(files.copy).toBe(true);
      expect(readFileSync(desktopCopy(session.xdg), 'utf8')).toContain('Exec=env PULSE_LATENCY_MSEC=40 ');
      expect(files.wrapper).toBe(which('chromium') !== null);
      expect(files.rule).toBeNull();
      // The options page sets every browser micoff knows: Firefox's command on PATH is wrapped as well.
      expect(restarts).toContain('chromium');
      expect(restarts).not.toContain('pipewire-pulse');
    } else {
      expect(files.rule).toContain('pulse.min.frag = 1920/48000');
      expect(files.copy).toBe(false);
      expect(restarts).toEqual(expect.arrayContaining(['pipewire-pulse', 'chromium']));
    }

    await session.restart(restarts);
    const on = await session.call((us) => us >= 35 * MS, 'Chromium granted >= 35 ms');
    expect(on.us).toBeGreaterThanOrEqual(35 * MS);
    const popup = await session.popupLine(on.meeting);
    await expect(popup.locator('#tab-latency')).toHaveText(
      /^Capture latency granted by the server: (39|40|41) ms\. Configured: 40 ms\.$/,
      { timeout: 15_000 },
    );
    await expect(popup.locator('#tab-echo')).toHaveText("Echo cancellation: on for this page's microphone.");
    options = await session.options();
    await expect(options.locator('#latency-configured')).toContainText('40 ms through');
    await expect(options.locator('#latency-configured')).toContainText('in effect.');
    await on.meeting.hangUp();

    // Back to the browser default from the options page: micoff's files go.
    await options.locator('#latency-select').selectOption('default');
    const back = await namedRestarts(options);
    await expect(options.locator('#latency-configured')).toContainText('Nothing configured');
    expect(session.files()).toEqual({ copy: false, wrapper: false, rule: null });
    await session.restart(back);
    const off = await session.call((us) => us > 0, 'Chromium capturing');
    expect(off.us).toBeLessThanOrEqual(15 * MS);
    const popup2 = await session.popupLine(off.meeting);
    await expect(popup2.locator('#tab-latency')).toHaveText(
      /^Capture latency granted by the server: (9|10|11) ms\.$/,
      { timeout: 15_000 },
    );
  } finally {
    await session.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('managed policy: the administrator’s 40 ms is applied through the host, shown as managed, not changeable', async ({
  rig,
  pages,
}) => {
  test.setTimeout(180_000);
  need(privateMountsMissing());
  const dir = mkdtempSync(join(tmpdir(), 'micoff-latency-policy-'));
  // The namespace's /etc/chromium: what the machine's holds, plus the policy.
  const etc = join(dir, 'etc-chromium');
  mkdirSync(join(etc, 'policies', 'managed'), { recursive: true });
  if (existsSync('/etc/chromium/master_preferences')) {
    copyFileSync('/etc/chromium/master_preferences', join(etc, 'master_preferences'));
  }
  writeFileSync(
    join(etc, 'policies', 'managed', 'micoff-test.json'),
    JSON.stringify({ '3rdparty': { extensions: { [extensionId()]: { captureLatencyMs: 40 } } } }),
  );
  const ns = await openMountNamespace([{ system: '/etc/chromium', test: etc }], dir);
  const launcher = ns.launcher(join(dir, 'chromium-with-policy'), CHROMIUM);
  const session = new Session(rig, pages, latencyXdg(rig, dir), dir, launcher);
  try {
    await session.launch();
    // The background applies the policy when the host connects: the host's files say 40 ms.
    const configured = await waitFor(
      'the managed 40 ms configured by the host',
      async () => {
        const st = await session.host<LatencyStatus>(['status']);
        return st.configured?.capture_ms === 40 ? st : null;
      },
      { timeoutMs: 20_000, intervalMs: 300 },
    );
    expect(configured.configured?.mechanism).toBe(
      rig.kind === 'pipewire' ? 'pipewire_pulse_rule' : 'launch_environment',
    );
    const options = await session.options();
    // The policy reached the extension's managed storage.
    expect(await options.evaluate(() => chrome.storage.managed.get('captureLatencyMs'))).toEqual({
      captureLatencyMs: 40,
    });
    await expect(options.locator('#latency-managed')).toBeVisible();
    await expect(options.locator('#latency-select')).toBeDisabled();
    await expect(options.locator('#latency-select')).toHaveValue('40');
    // The user cannot change it, even by asking the background directly.
    const reply = await options.evaluate(() =>
      chrome.runtime.sendMessage({ type: 'micoff_latency_set', capture_ms: null }),
    );
    expect((reply as { error: string | null }).error).toMatch(/administrator/);
    expect((await session.host<LatencyStatus>(['status'])).configured?.capture_ms).toBe(40);

    // In effect after the restart micoff names; the popup says it is the administrator's.
    const names = rig.kind === 'pipewire' ? ['pipewire-pulse', 'chromium'] : ['chromium'];
    await session.restart(names);
    const on = await session.call((us) => us >= 35 * MS, 'Chromium granted >= 35 ms');
    const popup = await session.popupLine(on.meeting);
    await expect(popup.locator('#tab-latency')).toHaveText(
      /^Capture latency granted by the server: (39|40|41) ms\. Configured: 40 ms, set by your administrator\.$/,
      { timeout: 15_000 },
    );
  } finally {
    await session.cleanup();
    await ns.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
