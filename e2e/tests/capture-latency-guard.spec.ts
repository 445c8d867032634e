// The latency-constraint trap, on the echo rig (echo-util.ts: the far end is heard by the mic):
//   - without micoff, a page asking {audio: {latency: 0.04}} gets Chromium's unprocessed path:
//     getSettings().echoCancellation is false (Chromium's behaviour, asserted so the test can fail)
//     and the far end's echo goes out as it is;
//   - with micoff the same page gets echo cancellation (getSettings true), its getConstraints() still
//     reads what it asked (no echoCancellation key), the popup's tab view names the guard, and the echo
//     it sends is at least 10 dB below the call without micoff;
//   - a page that explicitly asks for unprocessed audio ({latency: 0.04, echoCancellation: false})
//     gets exactly that with micoff too.
// micoff itself never adds a `latency` constraint: the guarded request carries only the page's.
// Raw figures: e2e/artifacts/capture-latency-guard-<server>.json.
import type { TabReleaseView } from '../../extension/src/shared/messages/popup-background.ts';
import { extensionServiceWorker } from '../rig/chromium.ts';
import { expect, test } from '../rig/fixtures.ts';
import { extensionId } from '../rig/host.ts';
import { dB, type EchoConfig, measureEcho, startEchoRig } from './echo-util.ts';
import { saveArtifact, tabIdOf, tabView } from './release-util.ts';

const LATENCY = { audio: { latency: 0.04 } } as unknown as MediaStreamConstraints;
const UNPROCESSED = {
  audio: { latency: 0.04, echoCancellation: false },
} as unknown as MediaStreamConstraints;

test('latency constraint: Chromium turns echo cancellation off, micoff keeps it on unless asked', async ({
  audioServer,
  pages,
}) => {
  test.setTimeout(240_000);
  const rig = await startEchoRig(audioServer);
  try {
    const configs: Record<string, EchoConfig> = {
      plain: { name: 'plain', latencyMs: null, constraints: LATENCY, withExtension: false },
      micoff: { name: 'micoff', latencyMs: null, constraints: LATENCY, withExtension: true },
      unprocessed: { name: 'unprocessed', latencyMs: null, constraints: UNPROCESSED, withExtension: true },
    };
    let view: TabReleaseView | null = null;
    const plain = await measureEcho(rig, pages, configs.plain as EchoConfig);
    const micoff = await measureEcho(rig, pages, configs.micoff as EchoConfig, {
      inspect: async (browser, call) => {
        const sw = await extensionServiceWorker(browser.context, extensionId());
        const tab = await tabIdOf(sw, call.page.url());
        await expect
          .poll(
            async () => {
              view = await tabView(sw, tab);
              return view?.latency_guard ?? null;
            },
            { timeout: 10_000 },
          )
          .toMatch(/kept echo cancellation on/);
      },
    });
    const unprocessed = await measureEcho(rig, pages, configs.unprocessed as EchoConfig, { windowMs: 2000 });
    const result = {
      server: audioServer,
      echo_db: { plain: plain.echo_db, micoff: micoff.echo_db },
      window_mean_db: { plain: dB(plain.energy_rate), micoff: dB(micoff.energy_rate) },
      plain_minus_micoff_db: plain.echo_db - micoff.echo_db,
      tab_view: view,
      runs: { plain, micoff, unprocessed },
    };
    saveArtifact(`capture-latency-guard-${audioServer}.json`, result);
    console.log(`capture-latency-guard: ${JSON.stringify({ ...result, runs: undefined })}`);

    // Chromium's own behaviour: the latency request silently costs echo cancellation.
    expect(plain.settings?.echoCancellation).toBe(false);
    // micoff keeps it on, invisibly to the page's own view of its request.
    expect(micoff.settings?.echoCancellation).toBe(true);
    expect(micoff.constraints).toEqual(plain.constraints);
    expect(micoff.constraints).not.toHaveProperty('echoCancellation');
    expect((view as TabReleaseView | null)?.echo_cancellation).toBe(true);
    // ... and it works: the echo the page sends is far below the unprocessed call's.
    expect(result.plain_minus_micoff_db).toBeGreaterThanOrEqual(10);
    // A page that asks for unprocessed audio gets it.
    expect(unprocessed.settings?.echoCancellation).toBe(false);
    expect(unprocessed.constraints).toHaveProperty('echoCancellation', false);
  } finally {
    await rig.stop();
  }
});
