// The Firefox build in Debian's Firefox ESR, on both servers: the extension's background reaches
// micoff-host over native messaging (Firefox's manifest in $HOME/.mozilla, `allowed_extensions`), the
// host names Firefox's processes by role and measures its audio threads, the popup shows the host and
// Firefox's record stream, the page's getUserMedia looks untouched (micoff only watches the mute on
// Firefox; Firefox's own pref releases), and micoff checks that pref at the audio server: with it on,
// muting releases the device and the popup says Firefox's release is in effect; without it, the
// microphone stays open and the popup says so, with the command that switches it on.
import type { Page } from 'puppeteer-core';
import { firefoxReleaseCommand } from '../../extension/src/shared/firefox-release.ts';
import type { CpuReport, Processes, Version } from '../../extension/src/shared/protocol.ts';
import type { AudioRig } from '../rig/audio-rig.ts';
import {
  backgroundTabs,
  firefoxExtensionId,
  firefoxMissing,
  launchFirefox,
  pageWaitFor,
  popupForTab,
  updateSettings,
} from '../rig/firefox.ts';
import { expect, test } from '../rig/fixtures.ts';
import { need } from '../rig/needs.ts';
import type { RecordStream } from '../rig/pactl.ts';
import { waitFor } from '../rig/proc.ts';

const NATIVE_RELEASE_DELAY_MS = 300;
/** micoff's release delay in the test without the pref (the command must carry this one). */
const MICOFF_DELAY_MS = 1500;
/** Firefox's own default for media.getusermedia.microphone.off_while_disabled.delay_ms. */
const FIREFOX_DEFAULT_DELAY_MS = 3000;
/** Firefox's threads that do the audio work (docs/test-rig.md, "Which threads do the audio work"). */
const FIREFOX_AUDIO_THREADS = /^(GraphRunner|AudioIP|cubeb|threaded-ml)/;

const firefoxRecord = (s: RecordStream) =>
  /firefox/i.test(`${s.applicationName ?? ''} ${s.processBinary ?? ''}`);

async function firefoxStreams(rig: AudioRig): Promise<RecordStream[]> {
  return (await rig.recordStreams()).filter(firefoxRecord);
}

/** Firefox's record stream once it runs (pipewire-pulse lists a new stream corked for a moment). */
function runningFirefoxStream(rig: AudioRig): Promise<RecordStream> {
  return waitFor('Firefox’s record stream running at the server', async () => {
    const s = (await firefoxStreams(rig)).find((x) => !x.corked);
    return s ?? null;
  });
}

/** The popup's line on Firefox's release once it reports `finding`: its text and its command, if any. */
async function nativeReleaseLine(
  popup: Page,
  finding: string,
  timeoutMs: number,
): Promise<{ text: string; command: string | null }> {
  const line = await pageWaitFor(
    popup,
    `the popup saying Firefox’s release is ${finding}`,
    (want: string) => {
      const el = document.querySelector('#tab-native-release');
      if (el?.getAttribute('data-finding') !== want) return null;
      return { text: el.textContent ?? '', command: el.querySelector('.command code')?.textContent ?? null };
    },
    timeoutMs,
    finding,
  );
  if (!line) throw new Error('unreachable: pageWaitFor returns a truthy value');
  return line;
}

/** A host request through the background page's test surface (`globalThis.micoff`), as JSON. */
async function hostRequest<T>(popup: Page, request: Record<string, unknown>): Promise<T> {
  const json = await popup.evaluate(async (req) => {
    const bg = (await (
      globalThis as unknown as { browser: { runtime: { getBackgroundPage(): Promise<Window> } } }
    ).browser.runtime.getBackgroundPage()) as unknown as {
      micoff: { host: { request(r: unknown): Promise<unknown> } };
    };
    return JSON.stringify(await bg.micoff.host.request(req));
  }, request);
  return JSON.parse(json) as T;
}

test('Firefox ESR: the extension reaches micoff-host, which names and measures Firefox; native release on mute', async ({
  rig,
  pages,
}) => {
  need(firefoxMissing());
  test.setTimeout(120_000);
  const ff = await launchFirefox({ env: rig.clientEnv, nativeRelease: { delayMs: NATIVE_RELEASE_DELAY_MS } });
  try {
    // A meeting capturing for real from the rig.
    const meeting = await ff.browser.newPage();
    // playout: Firefox reports the level on the receiving side (no media-source audioLevel).
    await meeting.goto(pages.url('meeting.html?playout=1'));
    await pageWaitFor(meeting, 'the meeting page', () => window.ready !== undefined);
    await meeting.evaluate(() => window.ready);
    await runningFirefoxStream(rig);
    // What the page sees of micoff's mute watcher: nothing. Its replacements read as the browser's
    // own, the `enabled` getter is the browser's, and the realm carries no mark.
    const looks = await meeting.evaluate(() => {
      const src = (f: unknown) => Function.prototype.toString.call(f);
      const enabled = Object.getOwnPropertyDescriptor(MediaStreamTrack.prototype, 'enabled');
      return {
        sources: [
          navigator.mediaDevices.getUserMedia,
          MediaStreamTrack.prototype.stop,
          MediaStreamTrack.prototype.clone,
          MediaStream.prototype.clone,
          enabled?.get,
          enabled?.set,
        ].map(src),
        names: [navigator.mediaDevices.getUserMedia.name, enabled?.set?.name],
        marked: Symbol.for('micoff.page') in window,
      };
    });
    for (const text of looks.sources) expect(text).toContain('[native code]');
    expect(looks.names).toEqual(['getUserMedia', 'set enabled']);
    expect(looks.marked).toBe(false);

    // The popup (as a tab) names the host once the background reached it over native messaging.
    const popup = await ff.openExtensionPage('popup.html');
    await pageWaitFor(popup, 'the host pill naming the host', () =>
      /^host \d+\.\d+\.\d+/.test(document.querySelector('#host-pill')?.textContent ?? ''),
    );
    const version = await hostRequest<Version>(popup, { type: 'version' });
    expect(version.browser_family).toBe('firefox');
    expect(version.extension_id).toBe(firefoxExtensionId());

    // The host walks Firefox's tree from the parent that launched it and names the processes.
    const procs = await hostRequest<Processes>(popup, { type: 'processes' });
    expect(procs.browser?.pid).toBe(ff.pid);
    const roles = new Map(procs.processes.map((p) => [p.pid, p.role]));
    expect(roles.get(ff.pid)).toBe('browser');
    expect([...roles.values()]).toContain('content');
    expect(procs.audio_server.length).toBeGreaterThan(0);

    // Firefox's audio threads burn CPU while unmuted (schedstat run time where the kernel has it).
    const report = await hostRequest<CpuReport>(popup, { type: 'cpu_sample', window_ms: 2000 });
    const audio = report.processes.flatMap((p) =>
      p.threads.filter((t) => FIREFOX_AUDIO_THREADS.test(t.comm)).map((t) => ({ role: p.role, ...t })),
    );
    const busy = audio.filter((t) => (t.run_time_pct ?? t.cpu_pct) > 0).map((t) => `${t.role}/${t.comm}`);
    expect(busy.length, JSON.stringify(audio)).toBeGreaterThan(0);
    // They live in Firefox's processes (content: GraphRunner; parent: the cubeb/libpulse threads).
    expect(
      busy.some((t) => /^(content|browser)\//.test(t)),
      busy.join(', '),
    ).toBe(true);

    // The popup lists the record stream as the server sees it.
    await pageWaitFor(popup, 'Firefox’s stream in the popup', () =>
      /firefox/i.test(document.querySelector('#streams-body')?.textContent ?? ''),
    );
    // The meeting's tab in the popup: capturing, its record stream open, the check waiting for a mute.
    const tabPopup = await popupForTab(ff, popup, new URL(pages.url('meeting.html')).origin);
    await pageWaitFor(tabPopup, 'the tab’s record stream and the check in the popup', () => {
      const server = document.querySelector('#tab-server')?.textContent ?? '';
      const check = document.querySelector('#tab-native-release')?.textContent ?? '';
      return /1 record stream open/.test(server) && /at the next mute/.test(check);
    });

    // Firefox's native release (the pref the README gives): the source output goes away on mute…
    const mutedAt = Date.now();
    await meeting.evaluate(() => window.mute());
    await waitFor(
      'Firefox’s record stream gone after mute',
      async () => ((await firefoxStreams(rig)).length === 0 ? true : null),
      { timeoutMs: NATIVE_RELEASE_DELAY_MS + 5000 },
    );
    const releasedAfterMs = Date.now() - mutedAt;
    // micoff saw it at the server: the popup says Firefox's release is in effect, and offers no command.
    const inEffect = await nativeReleaseLine(tabPopup, 'in_effect', 15_000);
    expect(inEffect.text).toMatch(/its own release is in effect/);
    expect(inEffect.command).toBeNull();
    const seen = Object.values(await backgroundTabs(popup)).find((v) => v.native_release)?.native_release;
    const seenAfterMs = seen?.last?.state === 'in_effect' ? seen.last.after_ms : null;
    // …and comes back on unmute, with audio flowing again.
    await meeting.evaluate(() => window.unmute());
    await waitFor('Firefox’s record stream back after unmute', async () =>
      (await firefoxStreams(rig)).length > 0 ? true : null,
    );
    const before = await meeting.evaluate(() => window.stats());
    await waitFor('the far end hears the tone again after unmute', async () => {
      const s = await meeting.evaluate(() => window.stats());
      if (s.error) throw new Error(`meeting page error: ${s.error}`);
      return (s.inbound?.audioLevel ?? 0) > 0.01 &&
        (s.inbound?.totalAudioEnergy ?? 0) > (before.inbound?.totalAudioEnergy ?? 0)
        ? s
        : null;
    });
    expect((await meeting.evaluate(() => window.stats())).track?.readyState).toBe('live');
    console.log(
      `firefox: roles ${[...new Set(roles.values())].join(', ')}; busy audio threads ${busy.join(', ')}; ` +
        `native release ${releasedAfterMs} ms after mute (delay ${NATIVE_RELEASE_DELAY_MS} ms), ` +
        `${seenAfterMs} ms as micoff judged it`,
    );
  } finally {
    await ff.close();
  }
});

test('Firefox ESR without its pref keeps the mic open while muted; the popup says so, with the command that fixes it', async ({
  rig,
  pages,
}, testInfo) => {
  need(firefoxMissing());
  test.setTimeout(120_000);
  const ff = await launchFirefox({ env: rig.clientEnv });
  try {
    const meeting = await ff.browser.newPage();
    await meeting.goto(pages.url('meeting.html'));
    await pageWaitFor(meeting, 'the meeting page', () => window.ready !== undefined);
    await meeting.evaluate(() => window.ready);
    const stream = await runningFirefoxStream(rig);
    // micoff's own release delay (not the installer's default of 3000): the command must carry it.
    const options = await ff.openExtensionPage('options.html');
    await updateSettings(options, { releaseDelayMs: MICOFF_DELAY_MS });
    const popup = await popupForTab(ff, options, new URL(pages.url('meeting.html')).origin);
    await pageWaitFor(popup, 'the check waiting for a mute', () =>
      /at the next mute/.test(document.querySelector('#tab-native-release')?.textContent ?? ''),
    );

    const mutedAt = Date.now();
    await meeting.evaluate(() => window.mute());
    const line = await nativeReleaseLine(popup, 'not_in_effect', MICOFF_DELAY_MS + 20_000);
    const saidAfterMs = Date.now() - mutedAt;
    expect(line.text).toMatch(/Firefox's own release is not in effect/);
    expect(line.command).toBe(firefoxReleaseCommand(MICOFF_DELAY_MS));
    const shown = await popup.evaluate(() => ({
      state: document.querySelector('#tab-state')?.firstChild?.textContent ?? '',
      // micoff does not release on Firefox: no per-site release switches to offer.
      siteRow: (document.querySelector('#site-row') as HTMLElement | null)?.hidden,
      // micoff's quiet part is: whether a release keeps sending is the site's to choose.
      sending: (document.querySelector('#site-sending-row') as HTMLElement | null)?.hidden,
      sendingValue: (document.querySelector('#site-sending') as HTMLSelectElement | null)?.value,
    }));
    expect(shown.state).toMatch(/^Muted since .+, microphone still open\.$/);
    expect(shown.siteRow).toBe(true);
    expect([shown.sending, shown.sendingValue]).toEqual([false, 'auto']);
    // What the popup says is what the server shows: the same stream, open and running, past micoff's
    // delay and Firefox's default one (3 s).
    expect(saidAfterMs).toBeGreaterThan(Math.max(MICOFF_DELAY_MS, FIREFOX_DEFAULT_DELAY_MS));
    const still = await firefoxStreams(rig);
    expect(still.map((s) => s.index)).toContain(stream.index);
    expect(still.find((s) => s.index === stream.index)?.corked).toBe(false);
    await popup.screenshot({ path: testInfo.outputPath('popup-firefox-release-off.png'), fullPage: true });
    console.log(
      `firefox without the pref: the popup said "not in effect" ${saidAfterMs} ms after the mute ` +
        `(micoff's delay ${MICOFF_DELAY_MS} ms); command: ${line.command}`,
    );
  } finally {
    await ff.close();
  }
});
