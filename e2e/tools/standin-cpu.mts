// Experiment (issue 32): what a silent stand-in on the sender costs while the device is stopped.
// Four Chromiums without micoff on one PulseAudio rig, each a loopback call, sampled in the same windows:
// unmuted, stopped (the floor: the page's own stopped track), stopped + stand-in 'playback',
// stopped + stand-in 'interactive'. Prints medians and (standin - stopped) / unmuted.
import { startAudioRig } from '../rig/audio-rig.ts';
import { launchChromium } from '../rig/chromium.ts';
import { sampleCpu } from '../rig/host.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { startPageServer } from '../rig/page-server.ts';
import { byThread, median, onCpuPct } from '../tests/release-util.ts';

const WINDOWS = Number(process.env.WINDOWS ?? 10);
const WINDOW_S = Number(process.env.WINDOW_S ?? 4);
const server = (process.env.SERVER ?? 'pulseaudio') as 'pulseaudio' | 'pipewire';

const STANDIN = (hint: string) => `(async () => {
  const ctx = new AudioContext({ latencyHint: ${JSON.stringify(hint)}, sampleRate: 48000, sinkId: { type: 'none' } });
  const src = new ConstantSourceNode(ctx, { offset: 0 });
  const dest = new MediaStreamAudioDestinationNode(ctx, { channelCount: 1 });
  src.connect(dest);
  src.start();
  await ctx.resume();
  const t = dest.stream.getAudioTracks()[0];
  call.track.stop();
  await call.sender.replaceTrack(t);
  window.__standin = { ctx, t };
  return ctx.baseLatency;
})()`;

const rig = await startAudioRig(server, { reader: false, tone: true });
const pages = await startPageServer();
const configs = ['unmuted', 'stopped', 'standin-playback', 'standin-interactive'] as const;
const browsers: Awaited<ReturnType<typeof launchChromium>>[] = [];
try {
  const pids: Record<string, number> = {};
  const meetings: Record<string, MeetingPage> = {};
  for (const c of configs) {
    const b = await launchChromium({ env: rig.clientEnv, withExtension: false });
    browsers.push(b);
    const m = await MeetingPage.open(b.context, pages.url('meeting.html'));
    await m.ready();
    await m.waitForAudioFlowing();
    meetings[c] = m;
    pids[c] = await b.browserPid();
  }
  await meetings.stopped?.page.evaluate('window.stopTrack()');
  console.log('playback baseLatency', await meetings['standin-playback']?.page.evaluate(STANDIN('playback')));
  console.log(
    'interactive baseLatency',
    await meetings['standin-interactive']?.page.evaluate(STANDIN('interactive')),
  );
  await new Promise((r) => setTimeout(r, 3000));
  const sent = async () =>
    Object.fromEntries(
      await Promise.all(configs.map(async (c) => [c, (await meetings[c]?.stats())?.outbound?.packetsSent])),
    );
  const before = await sent();
  const t0 = Date.now();
  const rows: Record<string, number>[] = [];
  const threads: Record<string, Record<string, number>[]> = {};
  for (let i = 0; i < WINDOWS; i++) {
    const order = i % 2 ? [...configs].reverse() : [...configs];
    const reports = await Promise.all(
      order.map((c) => sampleCpu({ browserPid: pids[c], windowS: WINDOW_S, env: rig.clientEnv })),
    );
    const row: Record<string, number> = {};
    order.forEach((c, k) => {
      const r = reports[k];
      if (!r) throw new Error(`no CPU report for ${c}`);
      row[c] = onCpuPct(r);
      threads[c] = [...(threads[c] ?? []), byThread(r)];
    });
    rows.push(row);
    console.log(i, JSON.stringify(row));
  }
  const after = await sent();
  const secs = (Date.now() - t0) / 1000;
  const at = (r: Record<string, number>, c: string) => r[c] ?? Number.NaN;
  const med = Object.fromEntries(configs.map((c) => [c, median(rows.map((r) => at(r, c)))]));
  console.log('medians', JSON.stringify(med));
  for (const c of ['standin-playback', 'standin-interactive']) {
    const r = median(rows.map((x) => (at(x, c) - at(x, 'stopped')) / at(x, 'unmuted')));
    console.log(`${c}: above stopped, of unmuted (median of windows): ${r.toFixed(3)}`);
  }
  console.log(
    'packets/s',
    JSON.stringify(Object.fromEntries(configs.map((c) => [c, ((after[c] - before[c]) / secs).toFixed(1)]))),
  );
  // Threads that differ between stand-in and stopped.
  const keys = new Set<string>();
  for (const c of configs) for (const t of threads[c] ?? []) for (const k of Object.keys(t)) keys.add(k);
  const tmed = (c: string, k: string) => median((threads[c] ?? []).map((t) => t[k] ?? 0));
  const out: string[] = [];
  for (const k of keys) {
    const v = configs.map((c) => tmed(c, k));
    if (Math.max(...v) >= 0.05)
      out.push(`${k.padEnd(60)} ${v.map((x) => x.toFixed(2).padStart(6)).join(' ')}`);
  }
  console.log(`threads (${configs.join(' / ')}):\n${out.sort().join('\n')}`);
} finally {
  for (const b of browsers) await b.close().catch(() => {});
  await pages.close();
  await rig.stop();
}
