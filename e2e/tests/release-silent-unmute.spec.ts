// Never a silent unmute: when a reopen cannot happen (permission taken back or denied, device gone) the
// page's track ends within 1 s of the unmute and micoff leaves no prompt pending. Chromium's real
// permission layer and content settings (e2e/rig/site-settings.ts), headful on a private Xvfb.
// Cases and why this rig: docs/design/release-on-mute.md#silent-unmute-spec.
// Raw samples: e2e/artifacts/release-silent-unmute.json.
import type { BrowserContext, Page } from '@playwright/test';
import { extensionServiceWorker, type LaunchedChromium } from '../rig/chromium.ts';
import { expect, test } from '../rig/fixtures.ts';
import { extensionId } from '../rig/host.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { need } from '../rig/needs.ts';
import { waitFor } from '../rig/proc.ts';
import { launchWithSiteSettings, type MicSetting, siteSettings } from '../rig/site-settings.ts';
import { type Xvfb, xvfbMissing } from '../rig/xvfb.ts';
import { saveArtifact, setReleaseSettings, whenStreams } from './release-util.ts';

test.skip(({ audioServer }) => audioServer !== 'pulseaudio', 'one audio server is enough: PulseAudio only');

interface Outcome {
  /** From the unmute to the page track's `ended` (page clock), null when it did not end. */
  ended_after_ms: number | null;
  readyState: string;
  enabled: boolean;
  reason: string | null;
}

/** Unmute from the page's code while hidden; the track's end, timed in the page. */
async function unmuteAndWatch(page: Page): Promise<Outcome> {
  await page.evaluate(`
    window.__ended = null;
    call.track.addEventListener('ended', () => { window.__ended = performance.now(); }, { once: true });
    window.__unmutedAt = performance.now();
    window.unmute();`);
  const ended = await waitFor(
    '`ended` on the page track',
    () =>
      page.evaluate('window.__ended === null ? null : window.__ended - window.__unmutedAt') as Promise<
        number | null
      >,
    { timeoutMs: 3000, intervalMs: 20 },
  ).catch(() => null);
  const now = (await page.evaluate(
    '({ readyState: call.track.readyState, enabled: call.track.enabled })',
  )) as {
    readyState: string;
    enabled: boolean;
  };
  return { ended_after_ms: ended, ...now, reason: null };
}

/** The tab view's reason for an ended device, as the background last heard it (null: none gave one). */
async function endedReason(sw: Awaited<ReturnType<typeof extensionServiceWorker>>): Promise<string | null> {
  return sw.evaluate(() => {
    const frames = (
      globalThis as unknown as { micoff: { release: { frames(): unknown } } }
    ).micoff.release.frames();
    for (const tab of Object.values(
      frames as Record<string, Record<string, { groups: { state: string; reason: string | null }[] }>>,
    ))
      for (const f of Object.values(tab))
        for (const g of f.groups) if (g.state === 'ended' && g.reason) return g.reason;
    return null;
  });
}

test('a reopen that cannot succeed ends the track within 1 s, from a hidden tab: permission taken back, denied, device gone', async ({
  rig,
  pages,
}) => {
  test.setTimeout(180_000);
  need(xvfbMissing());
  let x: Xvfb | undefined;
  let b: LaunchedChromium | undefined;
  const results: Record<string, Outcome & { streams_after?: number }> = {};
  try {
    ({ x, b } = await launchWithSiteSettings(rig.clientEnv));
    const sw = await extensionServiceWorker(b.context, extensionId());
    await setReleaseSettings(sw, { releaseOnMute: true, releaseDelayMs: 0 });
    const context: BrowserContext = b.context;
    const site = await siteSettings(context);
    const set = (setting: MicSetting) => site.set(pages.origin, setting);
    const paths: { name: string; takeAway: () => Promise<void>; restore: () => Promise<void> }[] = [
      {
        name: 'permission taken back (ask)',
        takeAway: () => set('ask'),
        restore: () => set('allow'),
      },
      { name: 'permission blocked', takeAway: () => set('block'), restore: () => set('allow') },
      {
        name: 'device gone',
        takeAway: async () => {
          await rig.pactl(['unload-module', 'module-remap-source']);
          await waitFor(
            '`mic` gone',
            async () => !(await rig.pactl(['list', 'short', 'sources'])).match(/\bmic\b/),
          );
        },
        restore: () => rig.restart(),
      },
    ];
    for (const path of paths) {
      await set('allow');
      const meeting = await MeetingPage.open(context, pages.url('meeting.html'));
      await meeting.ready();
      // The page's own view of the permission, to wait until the change has reached it.
      await meeting.page.evaluate(`
        window.__permission = null;
        navigator.permissions.query({ name: 'microphone' }).then((s) => { window.__permission = s; });`);
      await meeting.mute();
      await whenStreams(rig, `${path.name}: released`, (n) => n === 0, 3000);
      const other = await context.newPage();
      await other.goto(pages.url('index.html').replace('127.0.0.1', 'localhost'));
      await other.bringToFront();
      await waitFor(`${path.name}: the call's tab hidden`, async () =>
        (await meeting.page.evaluate('document.visibilityState')) === 'hidden' ? true : null,
      );
      await path.takeAway();
      if (path.name !== 'device gone') {
        await waitFor(`${path.name}: the page sees the permission change`, async () =>
          (await meeting.page.evaluate('window.__permission && window.__permission.state')) !== 'granted'
            ? true
            : null,
        );
      }
      const outcome = await unmuteAndWatch(meeting.page);
      // The page world's report of the ended group reaches the background a moment after the track ends:
      // where a reason is due, wait for it (r17 read it once, before it came).
      outcome.reason =
        path.name === 'device gone'
          ? await waitFor(`${path.name}: the ended group's reason at the background`, () => endedReason(sw), {
              timeoutMs: 2000,
            }).catch(() => null)
          : await endedReason(sw);
      // No record stream came back behind the ended track.
      await new Promise((r) => setTimeout(r, 300));
      results[path.name] = {
        ...outcome,
        streams_after: (await rig.recordStreams()).filter((s) => s.applicationName?.includes('input')).length,
      };
      await other.close();
      await meeting.close();
      await path.restore();
    }
    saveArtifact('release-silent-unmute.json', results);
    console.log(`release-silent-unmute: ${JSON.stringify(results)}`);
    for (const [name, r] of Object.entries(results)) {
      expect(r.ended_after_ms, `${name}: the page's track ended`).not.toBeNull();
      expect(
        r.ended_after_ms ?? Number.POSITIVE_INFINITY,
        `${name}: within 1 s of the unmute`,
      ).toBeLessThanOrEqual(1000);
      expect(r.readyState, name).toBe('ended');
      // The background counts only frames that hold the microphone permission (docs/design/security.md):
      // where the permission went, the tab shows no microphone at all; where the device went, it says why.
      if (name === 'device gone') expect(r.reason, `${name}: the popup says why`).toMatch(/microphone/);
      expect(r.streams_after, `${name}: no capture left behind`).toBe(0);
    }
  } finally {
    await b?.close();
    await x?.stop();
  }
});
