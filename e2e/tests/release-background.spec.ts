// Unmute from a hidden page: the user unmutes with a hotkey or a headset button while the call's tab is
// in the background, or while another window has the focus. The page flips `enabled` from its own code
// (as a hotkey handler would), nothing brings it forward. Bar as for a foreground unmute: the receiving
// peer's audio energy rises within 500 ms, the record stream is back, no page error.
// Chromium does not gate getUserMedia on visibility or focus (measured here: the reacquire of a hidden
// page is as fast as a visible one's), so micoff releases and reacquires hidden pages like any other;
// docs/design/release-on-mute.md ("Hidden pages and unfocused windows").
// Headful Chromium on a private Xvfb: a headless page is always visible and focused, which would make
// this test pass without testing anything (it asserts the page really is hidden / unfocused).
// Raw samples: e2e/artifacts/release-background.json.
import { extensionServiceWorker, type LaunchedChromium, launchChromium } from '../rig/chromium.ts';
import { expect, test } from '../rig/fixtures.ts';
import { extensionId } from '../rig/host.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { waitFor } from '../rig/proc.ts';
import { startXvfb, XVFB, type Xvfb } from '../rig/xvfb.ts';
import { median, saveArtifact, setReleaseSettings, whenStreams } from './release-util.ts';

const CYCLES = 5;

test.skip(({ audioServer }) => audioServer !== 'pulseaudio', 'one audio server is enough: PulseAudio only');
test.skip(!XVFB, 'needs Xvfb (apt-get install xvfb; npm test installs it)');

test('unmute from a background tab and an unfocused window: audio back within 500 ms', async ({
  rig,
  pages,
}) => {
  test.setTimeout(120_000);
  let x: Xvfb | undefined;
  let b: LaunchedChromium | undefined;
  try {
    x = await startXvfb();
    b = await launchChromium({ env: rig.clientEnv, display: x.display });
    const sw = await extensionServiceWorker(b.context, extensionId());
    await setReleaseSettings(sw, { releaseOnMute: true, releaseDelayMs: 0 });
    const meeting = await MeetingPage.open(b.context, pages.url('meeting.html?playout=1'));
    await meeting.ready();
    await meeting.waitForAudioFlowing();
    const errors: string[] = [];
    meeting.page.on('pageerror', (e) => errors.push(String(e)));
    const seen = () =>
      meeting.page.evaluate(() => ({ visibility: document.visibilityState, focus: document.hasFocus() }));
    const energy = async () => (await meeting.stats()).inbound?.totalAudioEnergy ?? 0;
    // Playwright emulates focus for every page; off, so document.hasFocus() tells the truth.
    const cdp = await b.context.newCDPSession(meeting.page);
    await cdp.send('Emulation.setFocusEmulationEnabled', { enabled: false });
    await waitFor('the call page focused', async () => (await seen()).focus, { timeoutMs: 5000 });

    // Case 1: a new tab in front (window.open without features). Case 2: another window focused (a
    // popup window). The page opens them itself, as a user's click on a link would.
    const cases = {
      foreground: null, // the control: the same cycle with the call page in front
      'background tab': "window.__other = window.open('about:blank#tab')",
      'unfocused window':
        "window.__other = window.open('about:blank#window', 'other', 'popup,width=400,height=300')",
    } as const;
    const results: Record<string, unknown> = {};
    for (const [name, open] of Object.entries(cases)) {
      const samples: { energy_ms: number; resume_ms: number; seen: unknown }[] = [];
      for (let i = 0; i < CYCLES; i++) {
        await waitFor(`${name}: the call page focused again`, async () => (await seen()).focus, {
          timeoutMs: 5000,
        });
        await whenStreams(rig, `${name}: a record stream`, (n) => n === 1);
        await meeting.mute();
        await whenStreams(rig, `${name}: released`, (n) => n === 0, 2000);
        if (open) await meeting.page.evaluate(open);
        const state = await waitFor(
          `${name}: the call's page ${open ? 'to lose' : 'to keep'} the focus`,
          async () => {
            const s = await seen();
            return s.focus === !open ? s : null;
          },
          { timeoutMs: 5000 },
        );
        await new Promise((r) => setTimeout(r, 300));
        const e0 = await energy();
        const unmutedAt = Date.now();
        await meeting.unmute(); // page code, the page stays where it is
        const [backAt, risesAt] = await Promise.all([
          whenStreams(rig, `${name}: a record stream back`, (n) => n >= 1, 5000),
          waitFor(
            `${name}: received energy to rise`,
            async () => ((await energy()) > e0 + 1e-6 ? Date.now() : null),
            {
              timeoutMs: 5000,
              intervalMs: 10,
            },
          ),
        ]);
        samples.push({ energy_ms: risesAt - unmutedAt, resume_ms: backAt - unmutedAt, seen: state });
        expect((await seen()).focus, `${name}: focus unchanged when the audio came back`).toBe(!open);
        if (open) await meeting.page.evaluate('window.__other.close()');
      }
      results[name] = {
        median_energy_ms: median(samples.map((s) => s.energy_ms)),
        median_resume_ms: median(samples.map((s) => s.resume_ms)),
        samples,
      };
    }
    saveArtifact('release-background.json', results);
    console.log(`release-background: ${JSON.stringify(results)}`);
    for (const [name, r] of Object.entries(results) as [string, { median_energy_ms: number }][])
      expect(r.median_energy_ms, `${name}: audio at the peer after the unmute`).toBeLessThanOrEqual(500);
    expect((await meeting.stats()).track).toMatchObject({ readyState: 'live', enabled: true, muted: false });
    expect(errors).toEqual([]);
    await meeting.close();
  } finally {
    await b?.close();
    await x?.stop();
  }
});
