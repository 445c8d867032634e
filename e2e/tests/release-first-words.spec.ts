// First words: after micoff's unmute the far end hears the user as soon as after the plain flip
// (no extension, device kept open). Two browsers take turns unmute by unmute, each the only recorder
// of its own source; timed in the page from the unmute to the first words leaving the sender (the bar)
// and to the far end playing them (reported). Headful on a private Xvfb.
// Sources, unmute kinds and the bar: docs/design/release-on-mute.md#first-words-spec.
// Raw samples: e2e/artifacts/release-first-words-<project>-<source>.json.
import type { Page } from '@playwright/test';
import { extensionServiceWorker, type LaunchedChromium, launchChromium } from '../rig/chromium.ts';
import { expect, test } from '../rig/fixtures.ts';
import { extensionId } from '../rig/host.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { need } from '../rig/needs.ts';
import { waitFor } from '../rig/proc.ts';
import { startXvfb, type Xvfb, xvfbMissing } from '../rig/xvfb.ts';
import { INSTRUMENT, recordStreamsOn } from './first-words-util.ts';
import { median, saveArtifact, setReleaseSettings } from './release-util.ts';

const CYCLES = Number(process.env.MICOFF_FIRST_WORDS_CYCLES ?? 11);
/** Opus frame length the page's answer asks for (loopback.js `ptime`): a send time includes the
 * frame's phase, 0 to PTIME_MS after the unmute, on both sides alike; 10 ms frames halve that noise
 * against the default 20 (docs/design/release-on-mute.md#first-words-spec). */
const PTIME_MS = 10;
/** A 10 ms encoded frame at least this big carries the signal, one below it is silence (sizes in
 * docs/design/release-on-mute.md#first-words-spec); every frame of the 100 ms before the unmute (if any:
 * a released device sends none) must be a small one for a sample to count. */
const SPEECH_BYTES = 32;
/** Per unmute kind, micoff's median minus the flip's, at most (docs/design/release-on-mute.md#first-words-spec). */
const BAR_MS = 10;
const KINDS = [
  'hotkey',
  'click',
  'visible',
  ...(process.env.MICOFF_FIRST_WORDS_CODE === '1' ? ['code'] : []),
];
type Kind = 'hotkey' | 'click' | 'visible' | 'code';

interface Call {
  name: 'micoff' | 'flip';
  source: string;
  browser: LaunchedChromium;
  meeting: MeetingPage;
}

/** Unmute the way `kind` says; the page's own handler flips `enabled`. */
async function unmuteBy(kind: Kind, page: Page, other: () => Promise<Page>): Promise<void> {
  const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));
  switch (kind) {
    case 'hotkey':
      await page.keyboard.down('Control');
      await pause(100);
      await page.keyboard.press('KeyD');
      await page.keyboard.up('Control');
      return;
    case 'click': {
      const box = await page.locator('#unmute').boundingBox();
      if (!box) throw new Error('no unmute button');
      await page.mouse.move(box.x + box.width / 2, box.y + box.height / 2, { steps: 4 });
      await pause(400);
      await page.mouse.down();
      await pause(100);
      await page.mouse.up();
      return;
    }
    case 'visible': {
      const tab = await other();
      await tab.bringToFront();
      await waitFor('the call hidden', async () =>
        (await page.evaluate('document.visibilityState')) === 'hidden' ? true : null,
      );
      await pause(1000);
      await page.bringToFront();
      await waitFor('the call visible', async () =>
        (await page.evaluate('document.visibilityState')) === 'visible' ? true : null,
      );
      await pause(400);
      await page.evaluate('window.unmute()');
      return;
    }
    case 'code':
      await page.evaluate('window.unmute()');
  }
}

for (const sourceKind of ['monitor', 'clock'] as const) {
  test(`first words on a ${sourceKind} source: micoff's unmute within ${BAR_MS} ms of the plain flip (hotkey, click, tab back in front)`, async ({
    audioServer,
    pages,
  }) => {
    test.setTimeout(480_000);
    need(xvfbMissing());
    const { startAudioRig } = await import('../rig/audio-rig.ts');
    const rig = await startAudioRig(audioServer, { reader: false, tone: false });
    let x: Xvfb | undefined;
    const calls: Call[] = [];
    const others: Page[] = [];
    try {
      let sources: [string, string];
      if (sourceKind === 'monitor') {
        await rig.pactl(['load-module', 'module-null-sink', 'sink_name=spk2']);
        await rig.pactl(['load-module', 'module-remap-source', 'source_name=mic2', 'master=spk2.monitor']);
        await rig.playInto('spk', 'speech');
        await rig.playInto('spk2', 'speech');
        sources = ['mic', 'mic2'];
      } else {
        await rig.addClockedSource('clock1');
        await rig.addClockedSource('clock2');
        sources = ['clock1', 'clock2'];
      }
      x = await startXvfb();
      for (const [i, name] of (['micoff', 'flip'] as const).entries()) {
        const source = sources[i] as string;
        const browser = await launchChromium({
          env: { ...rig.clientEnv, PULSE_SOURCE: source },
          display: x.display,
          realFocus: true,
          withExtension: name === 'micoff',
          // Side by side: with no window manager a window fully covered by the other counts as
          // occluded to Chromium (X11 visibility), which stops drawing it and delays its input.
          extraArgs: [`--window-position=${i * 640},0`, '--window-size=640,800'],
        });
        if (name === 'micoff') {
          const sw = await extensionServiceWorker(browser.context, extensionId());
          await setReleaseSettings(sw, { releaseOnMute: true, releaseDelayMs: 0 });
        }
        const meeting = await MeetingPage.open(
          browser.context,
          pages.url(`meeting.html?playout=1&encoded=1&ptime=${PTIME_MS}`),
        );
        await meeting.ready();
        await meeting.waitForAudioFlowing();
        await meeting.page.evaluate(INSTRUMENT);
        calls.push({ name, source, browser, meeting });
      }
      const otherTab = async (c: Call) => {
        const tab = await c.browser.context.newPage();
        await tab.goto(pages.url('index.html').replace('127.0.0.1', 'localhost'));
        others.push(tab);
        return tab;
      };
      /** Muted, and micoff's device released (the flip's stays open by definition). */
      const muteAndSettle = async (c: Call) => {
        await c.meeting.mute();
        await c.meeting.page.mouse.move(900, 700); // the pointer away from the controls, in one step
        if (c.name === 'micoff') {
          await waitFor(
            `${c.source} released`,
            async () => ((await recordStreamsOn(rig, c.source)) === 0 ? true : null),
            {
              timeoutMs: 5000,
            },
          );
        }
        await new Promise((r) => setTimeout(r, 700));
      };
      // One unmute of each kind first: what micoff learns to read as intent (a control, a key).
      for (const c of calls) {
        for (const kind of ['click', 'hotkey'] as const) {
          await muteAndSettle(c);
          await unmuteBy(kind, c.meeting.page, () => otherTab(c));
          await new Promise((r) => setTimeout(r, 500));
        }
      }
      type Sample = {
        sent_ms: number | null;
        sent_bytes: number | null;
        before: number[];
        heard_ms: number | null;
      };
      const samples: Record<string, Record<string, Sample[]>> = {};
      for (const kind of KINDS as Kind[]) {
        samples[kind] = { micoff: [], flip: [] };
        for (let i = 0; i < CYCLES; i++) {
          // Strictly one after the other, never the same browser twice in a row: back to back, micoff's
          // hotkey unmute came late in this two-browser arrangement (not when micoff's browser is alone;
          // docs/design/release-on-mute.md "First words: priming, and the e2e bar").
          for (const c of calls) {
            await muteAndSettle(c);
            await c.meeting.page.evaluate('window.__unmutedAt = null');
            const sent = c.meeting.page.evaluate(`__sent(4000, ${SPEECH_BYTES})`) as Promise<{
              ms: number;
              bytes: number;
              before: number[];
            } | null>;
            const heard = c.meeting.page.evaluate('__heard(4000)') as Promise<number | null>;
            await unmuteBy(kind, c.meeting.page, () => otherTab(c));
            const s = await sent;
            samples[kind]?.[c.name]?.push({
              sent_ms: s?.ms ?? null,
              sent_bytes: s?.bytes ?? null,
              before: s?.before ?? [],
              heard_ms: await heard,
            });
            for (const tab of others.splice(0)) await tab.close();
          }
        }
      }
      const med = (xs: (number | null)[]) => median(xs.map((v) => v ?? Number.POSITIVE_INFINITY));
      const result: Record<string, Record<string, number>> = {};
      for (const [kind, s] of Object.entries(samples)) {
        const micoff = med((s.micoff ?? []).map((x) => x.sent_ms));
        const flip = med((s.flip ?? []).map((x) => x.sent_ms));
        result[kind] = {
          micoff_sent_ms: micoff,
          flip_sent_ms: flip,
          micoff_minus_flip_ms: micoff - flip,
          micoff_heard_ms: med((s.micoff ?? []).map((x) => x.heard_ms)),
          flip_heard_ms: med((s.flip ?? []).map((x) => x.heard_ms)),
        };
      }
      saveArtifact(`release-first-words-${audioServer}-${sourceKind}.json`, { result, samples });
      console.log(`release-first-words ${audioServer} ${sourceKind}: ${JSON.stringify(result)}`);
      for (const [kind, s] of Object.entries(samples)) {
        for (const [who, list] of Object.entries(s)) {
          for (const x of list) {
            expect(x.sent_ms, `${kind} ${who}: the first words left the sender`).not.toBeNull();
            expect(
              Math.max(0, ...x.before),
              `${kind} ${who}: silence just before the unmute (${x.before.join('/')} bytes)`,
            ).toBeLessThan(SPEECH_BYTES);
          }
        }
      }
      for (const kind of ['hotkey', 'click', 'visible']) {
        expect(
          result[kind]?.micoff_minus_flip_ms,
          `${kind}: micoff minus the plain flip (ms)`,
        ).toBeLessThanOrEqual(BAR_MS);
      }
    } finally {
      for (const c of calls) await c.browser.close();
      await x?.stop();
      await rig.stop();
    }
  });
}
