// The grant keeper in the suite: with its interval shortened through the test surface, a muted page in
// a background tab reopens its released microphone for a moment, on a page that only holds its track
// and on a call; the permission stays granted, no track ends, and an unmute from the background brings
// the audio back. Headful Chromium on a private Xvfb, attached over CDP (realFocus: the pages really
// hidden). Method and bars: docs/design/release-on-mute.md#grant-keeper-spec (the 12-minute run with
// the real prompt: release-one-time-grant.spec.ts).
// Raw samples: e2e/artifacts/release-grant-keeper.json.
import type { Page, Worker } from '@playwright/test';
import { KEPT } from '../../extension/src/shared/release-decision.ts';
import { extensionServiceWorker, type LaunchedChromium } from '../rig/chromium.ts';
import { expect, test } from '../rig/fixtures.ts';
import { extensionId } from '../rig/host.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { need } from '../rig/needs.ts';
import { waitFor } from '../rig/proc.ts';
import { launchWithSiteSettings, type SiteSettings, siteSettings } from '../rig/site-settings.ts';
import { type Xvfb, xvfbMissing } from '../rig/xvfb.ts';
import {
  chromiumStreams,
  saveArtifact,
  setReleaseSettings,
  tabIdOf,
  tabView,
  whenStreams,
} from './release-util.ts';

/** The keeper's interval in this test (Settings.grantKeepaliveMs; shipped: 3 minutes). */
const EVERY_MS = 8000;
/** An unmute from the background: the record stream (and on the call the far end's audio) back within
 * this. Loose: the functional lane runs under load; release-background.spec.ts holds the tight bar. */
const BACK_MS = 1500;

test.skip(({ audioServer }) => audioServer !== 'pulseaudio', 'one audio server is enough: PulseAudio only');
test.beforeEach(() => need(xvfbMissing()));

interface Decision {
  at_ms: number;
  tab: number;
  answer: { allow: boolean };
}
type Frames = Record<string, Record<string, { groups: { state: string; reason: string | null }[] }>>;
type Micoff = { release: { frames(): unknown; decisions(): unknown } };

/** The release questions each tab asked so far (each release asks one: the first at the mute, one after
 * each keepalive's hold). */
async function releasesByTab(sw: Worker): Promise<Map<number, number[]>> {
  const all = (await sw.evaluate(() =>
    (globalThis as unknown as { micoff: Micoff }).micoff.release.decisions(),
  )) as Decision[];
  const out = new Map<number, number[]>();
  for (const d of all) if (d.answer.allow) out.set(d.tab, [...(out.get(d.tab) ?? []), d.at_ms]);
  return out;
}

/** Tabs whose device micoff reports reopened by the keeper right now. */
async function keptAliveTabs(sw: Worker): Promise<number[]> {
  const frames = (await sw.evaluate(() =>
    (globalThis as unknown as { micoff: Micoff }).micoff.release.frames(),
  )) as Frames;
  return Object.entries(frames)
    .filter(([, byFrame]) =>
      Object.values(byFrame).some((f) => f.groups.some((g) => g.reason === KEPT.keepalive)),
    )
    .map(([tab]) => Number(tab));
}

const permission = (p: Page) =>
  p.evaluate(async () => (await navigator.permissions.query({ name: 'microphone' as PermissionName })).state);

/** The page asks for the microphone twice: the site blocked at its first request (so the permission
 * was not granted when it first asked: micoff takes the grant for one that may expire), allowed before
 * the second (Chromium's real content settings), which gives the track. No prompt is ever pending. */
async function askBlockedThenAllowed(page: Page, site: SiteSettings, origin: string): Promise<void> {
  await site.set(origin, 'block');
  const first = await page.evaluate(() =>
    navigator.mediaDevices.getUserMedia({ audio: true }).then(
      (s) => {
        for (const t of s.getTracks()) t.stop();
        return 'granted';
      },
      (e: Error) => e.name,
    ),
  );
  expect(first, `${origin}: the first request, blocked`).toBe('NotAllowedError');
  await site.set(origin, 'allow');
  await waitFor(`${origin}: allowed`, async () => (await permission(page)) === 'granted');
}

test('the grant keeper reopens a muted page in the background: a held track and a call, still granted, the unmute from the background heard', async ({
  rig,
  pages,
}) => {
  test.setTimeout(120_000);
  let x: Xvfb | undefined;
  let b: LaunchedChromium | undefined;
  try {
    ({ x, b } = await launchWithSiteSettings(rig.clientEnv));
    const site = await siteSettings(b.context);
    const sw = await extensionServiceWorker(b.context, extensionId());
    await setReleaseSettings(sw, { releaseOnMute: true, releaseDelayMs: 0, grantKeepaliveMs: EVERY_MS });

    // A call (127.0.0.1: the loopback call of meeting.html, on a page that asks as below) and a page
    // that only holds its track (localhost): two sites, so that each page asks for itself.
    const callPage = await b.context.newPage();
    await callPage.goto(pages.url('index.html?playout=1'));
    await askBlockedThenAllowed(callPage, site, pages.origin);
    await callPage.evaluate(() => {
      const state = document.createElement('output');
      state.id = 'state';
      document.body.append(state);
    });
    await callPage.addScriptTag({ url: pages.url('loopback.js') });
    await callPage.evaluate('startCall("meeting", captureAndConnect)');
    const meeting = new MeetingPage(callPage, callPage.url());
    await meeting.ready();
    await meeting.waitForAudioFlowing();
    const holdUrl = pages.url('index.html').replace('127.0.0.1', 'localhost');
    const hold = await b.context.newPage();
    await hold.goto(holdUrl);
    await askBlockedThenAllowed(hold, site, new URL(holdUrl).origin);
    await hold.evaluate(async () => {
      const s = await navigator.mediaDevices.getUserMedia({ audio: true });
      (window as unknown as { held: MediaStreamTrack }).held = s.getAudioTracks()[0] as MediaStreamTrack;
    });
    const tabs = {
      call: await tabIdOf(sw, callPage.url()),
      hold: await tabIdOf(sw, holdUrl),
    };
    const setHeld = (on: boolean) =>
      hold.evaluate((v) => {
        (window as unknown as { held: MediaStreamTrack }).held.enabled = v;
      }, on);
    const heldTrack = () =>
      hold.evaluate(() => {
        const t = (window as unknown as { held: MediaStreamTrack }).held;
        return { readyState: t.readyState, enabled: t.enabled };
      });

    // Muted, released, and a tab in front: both pages hidden.
    await meeting.mute();
    await setHeld(false);
    await whenStreams(rig, 'both released', (n) => n === 0, 5000);
    const releasedAt = Date.now();
    for (const [name, id] of Object.entries(tabs)) {
      expect((await tabView(sw, id))?.grant_may_expire, `${name}: the grant may be a one-time one`).toBe(
        true,
      );
    }
    const other = await b.context.newPage();
    await other.bringToFront();
    for (const [name, p] of [
      ['call', meeting.page],
      ['hold', hold],
    ] as const) {
      await waitFor(`${name}: hidden`, async () =>
        (await p.evaluate(() => document.visibilityState)) === 'hidden' ? true : null,
      );
    }
    const before = await releasesByTab(sw);
    const count = (m: Map<number, number[]>, tab: number) => m.get(tab)?.length ?? 0;

    // Until each page released again after a keepalive: the server's record streams, the keeper's
    // reason in micoff's reports and the permission, polled.
    const serverRuns: number[] = [];
    let runStart: number | null = null;
    const keptSeen = new Set<number>();
    const permissions = new Set<string>();
    let polls = 0;
    const after = await waitFor(
      'a keepalive and its release on both pages',
      async () => {
        polls++;
        const n = (await chromiumStreams(rig)).length;
        if (n > 0 && runStart === null) runStart = Date.now();
        if (n === 0 && runStart !== null) {
          serverRuns.push(Date.now() - runStart);
          runStart = null;
        }
        for (const t of await keptAliveTabs(sw)) keptSeen.add(t);
        if (polls % 10 === 0) for (const p of [meeting.page, hold]) permissions.add(await permission(p));
        const now = await releasesByTab(sw);
        return count(now, tabs.call) > count(before, tabs.call) &&
          count(now, tabs.hold) > count(before, tabs.hold) &&
          serverRuns.length > 0
          ? now
          : null;
      },
      { timeoutMs: 3 * EVERY_MS + 10_000, intervalMs: 50 },
    );
    for (const p of [meeting.page, hold]) permissions.add(await permission(p));
    /** When a tab's device was released again after its first keepalive (its hold and reopen after the
     * interval). */
    const releasedAgain = (tab: number) => (after.get(tab) ?? [])[count(before, tab)] ?? Number.NaN;

    // Back to the shipped interval (a config change the pages take up), then the unmutes from the
    // background, one page at a time, each from no capture.
    await setReleaseSettings(sw, { grantKeepaliveMs: 180_000 });
    await whenStreams(rig, 'no keepalive running', (n) => n === 0, 5000);
    const heldAt = Date.now();
    await setHeld(true);
    const heldBack = (await whenStreams(rig, 'hold: a record stream back', (n) => n >= 1, 5000)) - heldAt;
    await setHeld(false);
    await whenStreams(rig, 'hold: released again', (n) => n === 0, 5000);
    const energy = async () => (await meeting.stats()).inbound?.totalAudioEnergy ?? 0;
    const e0 = await energy();
    const callAt = Date.now();
    await meeting.unmute();
    const [callStream, callEnergy] = await Promise.all([
      whenStreams(rig, 'call: a record stream back', (n) => n >= 1, 5000),
      waitFor(
        'call: the far end hears the unmute',
        async () => ((await energy()) > e0 + 1e-6 ? Date.now() : null),
        {
          timeoutMs: 5000,
          intervalMs: 10,
        },
      ),
    ]);
    const result = {
      every_ms: EVERY_MS,
      released_again_after_ms: {
        call: releasedAgain(tabs.call) - releasedAt,
        hold: releasedAgain(tabs.hold) - releasedAt,
      },
      keepalive_reported: { call: keptSeen.has(tabs.call), hold: keptSeen.has(tabs.hold) },
      server_runs_ms: serverRuns,
      permissions: [...permissions],
      still_hidden: {
        call: await meeting.page.evaluate(() => document.visibilityState),
        hold: await hold.evaluate(() => document.visibilityState),
      },
      hold_stream_back_ms: heldBack,
      call_stream_back_ms: callStream - callAt,
      call_far_end_energy_ms: callEnergy - callAt,
      permission_after: { call: await permission(meeting.page), hold: await permission(hold) },
      call_track: (await meeting.stats()).track,
      held_track: await heldTrack(),
    };
    saveArtifact('release-grant-keeper.json', result);
    console.log(`release-grant-keeper: ${JSON.stringify(result)}`);

    expect(result.permissions, 'the permission while muted in the background').toEqual(['granted']);
    // Not before the interval: the timer runs from the release (Chromium aligns hidden pages' timers
    // to the second).
    for (const [name, ms] of Object.entries(result.released_again_after_ms))
      expect(ms, `${name}: released again after a keepalive, not before the interval`).toBeGreaterThanOrEqual(
        EVERY_MS - 1000,
      );
    expect(result.still_hidden).toEqual({ call: 'hidden', hold: 'hidden' });
    expect(result.hold_stream_back_ms, 'hold: unmuted from the background').toBeLessThanOrEqual(BACK_MS);
    expect(result.call_stream_back_ms, 'call: unmuted from the background').toBeLessThanOrEqual(BACK_MS);
    expect(result.call_far_end_energy_ms, 'call: the far end hears it').toBeLessThanOrEqual(BACK_MS);
    expect(result.permission_after).toEqual({ call: 'granted', hold: 'granted' });
    expect(result.call_track).toMatchObject({ readyState: 'live', enabled: true });
    expect(result.held_track).toEqual({ readyState: 'live', enabled: false });
  } finally {
    await b?.close();
    await x?.stop();
  }
});
