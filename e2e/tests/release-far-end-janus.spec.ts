// A far end that watches the packets: Janus 1.1.2 (e2e/rig/janus.ts) with its own janus.js, audio only,
// AudioBridge (an MCU: the room's mix) and VideoRoom (an SFU: a subscription to the feed). Janus's
// no-media timer tells the page "stopped receiving your audio" about a second after the last RTP
// packet; a plain mute keeps sending the disabled track's silence, and so does micoff's release where
// the page uses janus.js (the senders' stand-ins, extension/src/page/chromium/registry/sender-stand-ins.ts).
// Per plugin, three speakers side by side, each in its own room with its own listener, five released
// cycles: micoff as a newcomer has it (no answer for the site: janus.js found), micoff told never to keep
// sending on the site (the control: Janus notices its releases), and the plain mute. micoff: no "not
// receiving" at the page or in Janus's log, released every time, and the signal back at the listener
// within 10 ms of the plain mute's median. Method: docs/design/release-on-mute.md "Far ends that watch
// the packets".
import type { Page, Worker } from '@playwright/test';
import { SIGNAL_SINK } from '../rig/audio-rig.ts';
import { extensionServiceWorker, isInTree, type LaunchedChromium, launchChromium } from '../rig/chromium.ts';
import { expect, test } from '../rig/fixtures.ts';
import { extensionId } from '../rig/host.ts';
import { JANUS_CALL_PAGE, type Janus, janusMissing, startJanus } from '../rig/janus.ts';
import { need } from '../rig/needs.ts';
import { waitFor } from '../rig/proc.ts';
import { chromiumStreams, median, saveArtifact, setReleaseSettings, tabIdOf } from './release-util.ts';

const CYCLES = Number(process.env.MICOFF_JANUS_CYCLES ?? 5);
/** Muted this long per cycle: Janus's timer (1 s) fires 1-3 s after the last packet. */
const MUTED_MS = 4500;
/** The signal counts as back at the listener above this level (the rig's speech-like signal, never
 * silent, reads about -20 dBFS there). */
const HEARD_DB = -50;
/** micoff's audio back at the far end may trail the plain mute's median by this much (ms). */
const BACK_BAR_MS = 10;

/** micoff: as installed; silent: micoff with the site's answer "never keep sending"; plain: no micoff. */
type Config = 'micoff' | 'silent' | 'plain';
const CONFIGS: readonly Config[] = ['micoff', 'silent', 'plain'];

test.skip(
  ({ audioServer }) => audioServer !== 'pulseaudio',
  'Janus sees packets, not the audio server: PulseAudio project only',
);
// A signal without gaps (the rig's tone comes in 250 ms bursts: its phase would be most of "back").
test.use({ rigOptions: { tone: false } });
test.beforeAll(async ({ rig }) => {
  await rig.playInto(SIGNAL_SINK, 'speech');
});

interface JanusEvent {
  t: number;
  what: string;
  medium?: string;
  receiving?: boolean;
}

async function openCall(b: LaunchedChromium, janus: Janus, query: Record<string, string>): Promise<Page> {
  const page = await b.context.newPage();
  const q = new URLSearchParams({ ...query, server: janus.server, processing: '0' });
  await page.goto(`${janus.demos}${JANUS_CALL_PAGE}?${q}`);
  await page.evaluate('jc.ready').catch(async (e) => {
    const events = await page.evaluate('jc.events').catch(() => []);
    throw new Error(`the Janus call did not start (${query.role}): ${e}\n${JSON.stringify(events)}`);
  });
  return page;
}

/** Unmutes by the page's own button as a person does (the pointer on it, then a press), and returns
 * when the page's handler unmuted (Date.now()). */
async function clickUnmute(page: Page): Promise<number> {
  const box = await page.locator('#toggle').boundingBox();
  if (!box) throw new Error('no mute button');
  const before = Date.now();
  await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 4 });
  await new Promise((r) => setTimeout(r, 400));
  await page.mouse.down();
  await new Promise((r) => setTimeout(r, 100));
  await page.mouse.up();
  return waitFor(
    'the page unmuted',
    async () => {
      const at = (await page.evaluate('jc.unmutedAt()')) as number | null;
      return at !== null && at >= before ? at : null;
    },
    { timeoutMs: 2000, intervalMs: 10 },
  );
}

/** Each cycle starts with another speaker, so none is always first to unmute. */
const rotated = (i: number): Config[] => {
  const k = i % CONFIGS.length;
  return [...CONFIGS.slice(k), ...CONFIGS.slice(0, k)];
};

for (const plugin of ['audiobridge', 'videoroom'] as const) {
  test(`Janus ${plugin}: a released microphone is still received, and comes back as fast as a plain mute`, async ({
    rig,
  }) => {
    need(janusMissing());
    test.setTimeout(150_000);
    const janus = await startJanus();
    const browsers: LaunchedChromium[] = [];
    try {
      const browser = {} as Record<Config, LaunchedChromium>;
      const sws = {} as Record<Config, Worker>;
      for (const c of CONFIGS) {
        const b = await launchChromium({ env: rig.clientEnv, withExtension: c !== 'plain' });
        browsers.push(b);
        browser[c] = b;
        if (c === 'plain') continue;
        sws[c] = await extensionServiceWorker(b.context, extensionId());
        await setReleaseSettings(sws[c], { releaseOnMute: true, releaseDelayMs: 0 });
      }
      const far = await launchChromium({ env: rig.clientEnv, withExtension: false });
      browsers.push(far);
      const room: Record<Config, string> = { micoff: '4101', silent: '4102', plain: '4103' };
      const speaker = {} as Record<Config, Page>;
      const listener = {} as Record<Config, Page>;
      for (const c of CONFIGS) {
        speaker[c] = await openCall(browser[c], janus, { plugin, room: room[c], role: 'speaker' });
        listener[c] = await openCall(far, janus, { plugin, room: room[c], role: 'listener' });
      }
      // The control's user picks "never on this site" in the popup, on the call's tab.
      const tab = await tabIdOf(sws.silent, speaker.silent.url());
      const popup = await browser.silent.context.newPage();
      await popup.goto(`chrome-extension://${extensionId()}/popup.html?tab=${tab}`);
      await popup.locator('#site-sending').selectOption('off');
      await waitFor("the site's answer stored", async () => {
        const s = (await sws.silent.evaluate(() =>
          (
            globalThis as unknown as { micoff: { settings: { get(): Promise<unknown> } } }
          ).micoff.settings.get(),
        )) as { keepSendingSites: Record<string, boolean> };
        return s.keepSendingSites[janus.demos] === false ? true : null;
      });
      await popup.screenshot({ path: test.info().outputPath('release-far-end-janus-popup-never.png') });
      await popup.close();
      // The settings' change reaches the capturing page through its content script.
      await new Promise((r) => setTimeout(r, 500));
      const pids = [await browser.micoff.browserPid(), await browser.silent.browserPid()];
      /** The micoff browsers' record streams at the server. */
      const micoffStreams = async () =>
        (await chromiumStreams(rig)).filter((s) => {
          const pid = s.processId;
          return pid !== null && pids.some((p) => isInTree(pid, p));
        }).length;
      const heardAfter = (c: Config, t: number) =>
        listener[c].evaluate(
          ([t, db]) =>
            (window as unknown as { jc: { heardAfter(t: number, db: number): number | null } }).jc.heardAfter(
              t,
              db,
            ),
          [t, HEARD_DB] as const,
        );
      for (const c of CONFIGS) {
        const t = Date.now();
        await waitFor(`the far end hears ${c}'s signal`, async () => (await heardAfter(c, t)) ?? null, {
          timeoutMs: 10_000,
          intervalMs: 50,
        });
      }

      const cycles: { cycle: number; config: Config; released: boolean; back_ms: number }[] = [];
      // Cycle 0 is not counted: micoff learns the page's button as its unmute control there.
      for (let i = 0; i <= CYCLES; i++) {
        for (const c of rotated(i)) await speaker[c].evaluate('jc.mute()');
        await waitFor(
          'micoff released both microphones',
          async () => ((await micoffStreams()) === 0 ? true : null),
          {
            timeoutMs: 3000,
            intervalMs: 20,
          },
        );
        await new Promise((r) => setTimeout(r, MUTED_MS));
        const released = (await micoffStreams()) === 0;
        for (const c of rotated(i)) {
          const at = await clickUnmute(speaker[c]);
          const heard = await waitFor(`${c}'s signal back at the far end`, async () => heardAfter(c, at), {
            timeoutMs: 5000,
            intervalMs: 10,
          });
          if (i > 0)
            cycles.push({ cycle: i, config: c, released: c !== 'plain' && released, back_ms: heard - at });
        }
        await new Promise((r) => setTimeout(r, 1500));
      }

      const events = {} as Record<Config, JanusEvent[]>;
      const ids = {} as Record<Config, number>;
      for (const c of CONFIGS) {
        events[c] = (await speaker[c].evaluate('jc.events')) as JanusEvent[];
        ids[c] = (await speaker[c].evaluate('jc.id()')) as number;
      }
      const log = janus.log().split('\n');
      const per = <T>(f: (c: Config) => T) =>
        Object.fromEntries(CONFIGS.map((c) => [c, f(c)])) as Record<Config, T>;
      const noMedia = per((c) => log.filter((l) => l.includes(`[${ids[c]}] Didn't receive`)));
      const stopped = per((c) => events[c].filter((e) => e.what === 'mediaState' && e.receiving === false));
      const back = per((c) => median(cycles.filter((x) => x.config === c).map((x) => x.back_ms)));
      saveArtifact(`release-far-end-janus-${plugin}.json`, {
        plugin,
        cycles,
        back_median_ms: back,
        not_receiving_events: per((c) => stopped[c].length),
        janus_no_media_lines: noMedia,
        events,
      });
      console.log(
        `janus ${plugin}: audio back (median ms) ${JSON.stringify(back)}; "stopped receiving" ${JSON.stringify(per((c) => stopped[c].length))}`,
      );

      const releasedCycles = (c: Config) => cycles.filter((x) => x.config === c && x.released).length;
      expect(releasedCycles('micoff'), 'micoff released in every cycle').toBe(CYCLES);
      expect(releasedCycles('silent'), 'the control released in every cycle').toBe(CYCLES);
      expect(noMedia.plain, 'a plain mute keeps Janus receiving').toEqual([]);
      expect(
        stopped.silent.length,
        'the control: Janus notices a release without packets',
      ).toBeGreaterThanOrEqual(CYCLES);
      expect(noMedia.micoff, "Janus's no-media timer with micoff").toEqual([]);
      expect(stopped.micoff, 'janus.js mediaState "stopped receiving" at the page').toEqual([]);
      expect(back.micoff - back.plain, 'audio back at the far end, micoff - plain (ms)').toBeLessThanOrEqual(
        BACK_BAR_MS,
      );
    } finally {
      for (const b of browsers) await b.close().catch(() => {});
      await janus.stop();
    }
  });
}
