// The Firefox build in Debian's Firefox ESR, on both servers: the extension's background reaches
// micoff-host over native messaging (Firefox's manifest in $HOME/.mozilla, `allowed_extensions`), the
// host names Firefox's processes by role and measures its audio threads, the popup shows the host and
// Firefox's record stream, the page's getUserMedia is left alone (Firefox releases natively), and with
// Firefox's own pref on, muting really releases the device at the server (what the README tells
// Firefox users to do).
import { existsSync } from 'node:fs';
import type { Page } from 'puppeteer-core';
import type { CpuReport, Processes, Version } from '../../extension/src/shared/protocol.ts';
import type { AudioRig } from '../rig/audio-rig.ts';
import { firefoxExtensionId, launchFirefox, pageWaitFor } from '../rig/firefox.ts';
import { expect, test } from '../rig/fixtures.ts';
import type { RecordStream } from '../rig/pactl.ts';
import { FIREFOX } from '../rig/paths.ts';
import { waitFor } from '../rig/proc.ts';

const NATIVE_RELEASE_DELAY_MS = 300;
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
  test.skip(!existsSync(FIREFOX), `${FIREFOX} is not installed (Debian's firefox-esr; none on Ubuntu)`);
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
    // The page's own getUserMedia: micoff's interposition stays out of Firefox.
    expect(
      await meeting.evaluate(() => Function.prototype.toString.call(navigator.mediaDevices.getUserMedia)),
    ).toContain('[native code]');

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

    // Firefox's native release (the pref the README gives): the source output goes away on mute…
    const mutedAt = Date.now();
    await meeting.evaluate(() => window.mute());
    await waitFor(
      'Firefox’s record stream gone after mute',
      async () => ((await firefoxStreams(rig)).length === 0 ? true : null),
      { timeoutMs: NATIVE_RELEASE_DELAY_MS + 5000 },
    );
    const releasedAfterMs = Date.now() - mutedAt;
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
        `native release ${releasedAfterMs} ms after mute (delay ${NATIVE_RELEASE_DELAY_MS} ms)`,
    );
  } finally {
    await ff.close();
  }
});

test('Firefox ESR without its pref keeps the mic open while muted (what the README’s pref changes)', async ({
  rig,
  pages,
}) => {
  test.skip(!existsSync(FIREFOX), `${FIREFOX} is not installed (Debian's firefox-esr; none on Ubuntu)`);
  const ff = await launchFirefox({ env: rig.clientEnv });
  try {
    const meeting = await ff.browser.newPage();
    await meeting.goto(pages.url('meeting.html'));
    await pageWaitFor(meeting, 'the meeting page', () => window.ready !== undefined);
    await meeting.evaluate(() => window.ready);
    const stream = await runningFirefoxStream(rig);
    await meeting.evaluate(() => window.mute());
    // Well past the 300 ms the test above releases after, and past Firefox's default 3 s delay.
    await new Promise((r) => setTimeout(r, 4000));
    const still = await firefoxStreams(rig);
    expect(still.map((s) => s.index)).toContain(stream.index);
    expect(still.find((s) => s.index === stream.index)?.corked).toBe(false);
  } finally {
    await ff.close();
  }
});
