// Capture latency, host side: `micoff-host latency set|status|reset` against real servers and a real
// Chromium capture (projects `pulseaudio` and `pipewire`), without the rig's 10 ms reader.
// What each server case checks: docs/design/capture-latency.md#host-latency-spec.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LatencySetResult, LatencyStatus } from '../../extension/src/shared/protocol.ts';
import type { AudioRig } from '../rig/audio-rig.ts';
import { execEnv, latencyHost as hostFor, serverGrantUs } from '../rig/capture-latency.ts';
import { type LaunchedChromium, launchChromium } from '../rig/chromium.ts';
import { expect, test } from '../rig/fixtures.ts';
import { requireHost } from '../rig/host.ts';
import { MeetingPage } from '../rig/meeting-page.ts';
import { CHROMIUM } from '../rig/paths.ts';
import { run, startChild, stopChild, waitFor, which } from '../rig/proc.ts';

// The rig without its 10 ms reader (it would hold a PulseAudio source at 10 ms).
test.use({ rigOptions: { reader: false } });

const MS = 1000;

async function startCall(
  env: NodeJS.ProcessEnv,
  pagesUrl: string,
  executablePath?: string,
): Promise<LaunchedChromium> {
  const chromium = await launchChromium({ env, withExtension: false, executablePath });
  await openCall(chromium, pagesUrl);
  return chromium;
}

/** Opens the meeting page in `chromium` and waits until its audio flows. */
async function openCall(chromium: LaunchedChromium, pagesUrl: string): Promise<MeetingPage> {
  const meeting = await MeetingPage.open(chromium.context, pagesUrl);
  await meeting.ready();
  await meeting.waitForAudioFlowing(20_000);
  return meeting;
}

/** The host for a pipewire-pulse case: a private HOME and data dirs under `dir`, the rig's config home
 * (where pipewire-pulse reads its drop-ins). */
function pipewireHost(rig: AudioRig): { dir: string; host: ReturnType<typeof hostFor> } {
  const dir = mkdtempSync(join(tmpdir(), 'micoff-latency-'));
  const host = hostFor(rig, {
    HOME: join(dir, 'home'),
    XDG_CONFIG_HOME: rig.configHome,
    XDG_DATA_HOME: join(dir, 'data'),
    XDG_DATA_DIRS: join(dir, 'system'),
  });
  return { dir, host };
}

/** Polls `latency status` until Chromium's capture stream matches `ok`. */
async function chromiumStream(
  status: () => Promise<LatencyStatus>,
  what: string,
  ok: (s: LatencyStatus['streams'][number]) => boolean,
): Promise<{ st: LatencyStatus; s: LatencyStatus['streams'][number] }> {
  let last: LatencyStatus | null = null;
  try {
    return await waitFor(
      what,
      async () => {
        last = await status();
        const s = last.streams.find((x) => x.browser === 'chromium');
        return s && ok(s) ? { st: last, s } : null;
      },
      { timeoutMs: 15_000, intervalMs: 300 },
    );
  } catch (e) {
    throw new Error(`${(e as Error).message}\nlast status: ${JSON.stringify(last, null, 2)}`);
  }
}

test('PulseAudio: launch environment 40 ms granted (menu entry and PATH wrapper), held down by a 10 ms parec, reset', async ({
  rig,
  pages,
  audioServer,
}) => {
  test.skip(audioServer !== 'pulseaudio', 'PulseAudio only');
  test.setTimeout(150_000);
  const dir = mkdtempSync(join(tmpdir(), 'micoff-latency-'));
  const system = join(dir, 'system');
  mkdirSync(join(system, 'applications'), { recursive: true });
  // The system entry the user's copy overrides (as Debian's chromium.desktop, with the rig's binary).
  writeFileSync(
    join(system, 'applications', 'chromium.desktop'),
    `[Desktop Entry]\nName=Chromium\nType=Application\nExec=${CHROMIUM} %U\n`,
  );
  const host = hostFor(rig, {
    HOME: join(dir, 'home'),
    XDG_CONFIG_HOME: join(dir, 'config'),
    XDG_DATA_HOME: join(dir, 'data'),
    XDG_DATA_DIRS: system,
  });
  const status = () => host<LatencyStatus>(['status']);
  let chromium: LaunchedChromium | null = null;
  let parec: ReturnType<typeof startChild> | null = null;
  try {
    const set = await host<LatencySetResult>(['set', '--capture-ms', '40', '--browser', 'chromium']);
    const copy = join(dir, 'data', 'applications', 'chromium.desktop');
    // Chromium's own command on PATH (what a terminal runs), wrapped in the private ~/.local/bin.
    const own = which('chromium');
    expect(own, 'chromium on PATH').not.toBeNull();
    const wrapper = join(dir, 'home', '.local', 'bin', 'chromium');
    expect(set.mechanism).toBe('launch_environment');
    expect(set.changed_files).toEqual([copy, wrapper]);
    expect(set.needs_restart).toEqual(['chromium']);
    expect(set.message).toContain('playback latency changes too');
    const again = await host<LatencySetResult>(['set', '--capture-ms', '40', '--browser', 'chromium']);
    expect(again.changed_files, 'idempotent').toEqual([]);

    // Start Chromium the way its menu entry now does.
    const env = execEnv(readFileSync(copy, 'utf8'));
    expect(env).toEqual({ PULSE_LATENCY_MSEC: '40' });
    chromium = await startCall({ ...rig.clientEnv, ...env }, pages.url('meeting.html'));

    const { st, s } = await chromiumStream(
      status,
      'Chromium granted >= 35 ms',
      (x) => x.capture_latency_us >= 35 * MS,
    );
    expect(st.server.kind).toBe('pulseaudio');
    expect(st.configured).toMatchObject({ capture_ms: 40, mechanism: 'launch_environment', in_effect: true });
    expect(st.needs_restart, JSON.stringify(st, null, 2)).toEqual([]);
    expect(s.launch_env_latency_ms).toBe(40);
    expect(s.held_down_by).toEqual([]);
    // The server's own view agrees.
    const outputs = await rig.recordStreams();
    const mine = outputs.find((o) => o.index === s.index);
    expect(mine, JSON.stringify(outputs)).toBeDefined();
    expect(mine?.processId).toBe(s.application_process_id);
    expect(Math.abs((mine?.bufferLatencyUs ?? 0) - s.granted_latency_us)).toBeLessThanOrEqual(1 * MS);
    expect(mine?.bufferLatencyUs ?? 0).toBeGreaterThanOrEqual(35 * MS);

    // Started by name instead (a terminal, a launcher's run dialog): the wrapper runs Chromium's own
    // command with the same environment, and the server grants the same.
    expect(readFileSync(wrapper, 'utf8')).toContain(
      `\nPULSE_LATENCY_MSEC=40\nexport PULSE_LATENCY_MSEC\nexec '${own}' "$@"\n`,
    );
    await chromium.close();
    chromium = await startCall(rig.clientEnv, pages.url('meeting.html'), wrapper);
    const byName = await chromiumStream(
      status,
      'Chromium started through the wrapper granted >= 35 ms',
      (x) => x.capture_latency_us >= 35 * MS && x.application_process_id !== s.application_process_id,
    );
    expect(byName.s.launch_env_latency_ms).toBe(40);
    expect(byName.st.configured?.in_effect).toBe(true);

    // Another reader at 10 ms on the same source holds Chromium down, and is named.
    parec = startChild(
      'parec 10 ms',
      'parec',
      ['--latency-msec=10', '-d', 'mic', '--raw'],
      join(dir, 'parec.log'),
      {
        env: rig.clientEnv,
        stdout: 'ignore',
      },
    );
    const held = await chromiumStream(
      status,
      'Chromium held down to ~10 ms by parec',
      (x) => x.held_down_by.length > 0,
    );
    expect(held.s.capture_latency_us).toBeLessThanOrEqual(15 * MS);
    expect(held.s.held_down_by.map((h) => h.application_process_id)).toContain(parec.pid);
    expect(held.s.held_down_by[0]?.application_name).toBe('parec');
    expect(held.s.held_down_by[0]?.latency_us).toBeLessThanOrEqual(15 * MS);
    expect(held.st.configured?.in_effect).toBe(false);
    const pactlView = (await rig.recordStreams()).find((o) => o.index === held.s.index);
    expect(pactlView?.bufferLatencyUs ?? 0).toBeLessThanOrEqual(15 * MS);
    await stopChild(parec);
    parec = null;

    // Reset: the copy goes, the browser needs a restart; after it, Chromium's own 10 ms again.
    const reset = await host<LatencySetResult>(['reset']);
    expect(reset.changed_files).toEqual([copy, wrapper]);
    expect(existsSync(wrapper)).toBe(false);
    expect(reset.needs_restart).toEqual(['chromium']);
    await chromium.close();
    chromium = await startCall(rig.clientEnv, pages.url('meeting.html'));
    const back = await chromiumStream(status, 'Chromium back at 10 ms', (x) => x.capture_latency_us > 0);
    expect(back.st.configured).toBeNull();
    expect(back.s.launch_env_latency_ms).toBeNull();
    expect(back.s.capture_latency_us).toBeLessThanOrEqual(15 * MS);
  } finally {
    if (parec) await stopChild(parec);
    await chromium?.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('pipewire-pulse: the pulse.rules drop-in gives Chromium >= 35 ms fragments after the restart it names', async ({
  rig,
  pages,
  audioServer,
}) => {
  test.skip(audioServer !== 'pipewire', 'pipewire-pulse only');
  test.setTimeout(150_000);
  // pipewire-pulse reads its drop-ins from $XDG_CONFIG_HOME: the rig's private one (e2e/rig/audio-rig.ts).
  const configHome = rig.configHome;
  const { dir, host } = pipewireHost(rig);
  const status = () => host<LatencyStatus>(['status']);
  let chromium: LaunchedChromium | null = null;
  try {
    const set = await host<LatencySetResult>(['set', '--capture-ms', '40']);
    const rule = join(configHome, 'pipewire', 'pipewire-pulse.conf.d', '50-micoff-capture-latency.conf');
    expect(set.mechanism).toBe('pipewire_pulse_rule');
    expect(set.changed_files).toEqual([rule]);
    expect(set.needs_restart).toContain('pipewire-pulse');
    const text = readFileSync(rule, 'utf8');
    expect(text).toContain('application.name = "Chromium input"');
    expect(text).toContain('pulse.min.frag = 1920/48000');
    // A minimum quantum for Chromium's playback client only (its name AND binary), never for the
    // capture clients and never a forced graph quantum.
    const [capture, playback] = text.split('pulse.min.frag = 1920/48000');
    expect(capture).not.toMatch(/pulse\.min\.quantum/);
    expect(playback).toContain('{ application.name = "Chromium" application.process.binary = "chromium" }');
    expect(playback).toContain('pulse.min.quantum = 1920/48000');
    expect(text).not.toMatch(/node\.latency|clock\./);

    let st = await status();
    expect(st.server.kind).toBe('pipewire_pulse');
    expect(st.configured?.mechanism).toBe('pipewire_pulse_rule');
    expect(st.needs_restart, 'the running pipewire-pulse predates the rule').toEqual(['pipewire-pulse']);

    await rig.restart();
    st = await status();
    expect(st.needs_restart).toEqual([]);
    expect(st.configured?.in_effect).toBeNull();

    chromium = await startCall(rig.clientEnv, pages.url('meeting.html'));
    const { st: on, s } = await chromiumStream(
      status,
      'Chromium fragment >= 35 ms',
      (x) => x.capture_latency_us >= 35 * MS,
    );
    expect(s.client_name).toBe('Chromium input');
    expect(s.rule_min_frag).toBe('1920/48000');
    expect(s.granted_fragment_us).toBe(s.capture_latency_us);
    expect(on.configured?.in_effect).toBe(true);
    expect(on.needs_restart).toEqual([]);
    // pactl's view: the same stream, its fragsize in bytes at its sample spec.
    const fragUs = (await serverGrantUs(rig, s.index)) ?? 0;
    expect(Math.abs(fragUs - s.capture_latency_us)).toBeLessThanOrEqual(1 * MS);
    expect(fragUs).toBeGreaterThanOrEqual(35 * MS);

    // Reset: the rule goes; the stream keeps it until pipewire-pulse restarts.
    const reset = await host<LatencySetResult>(['reset']);
    expect(reset.changed_files).toEqual([rule]);
    expect(reset.needs_restart).toContain('pipewire-pulse');
    expect(reset.message).toMatch(/stream\(s\) are open/);
    st = await status();
    expect(st.configured).toBeNull();
    expect(st.needs_restart).toEqual(['pipewire-pulse']);
    await chromium.close();
    chromium = null;
    await rig.restart();
    chromium = await startCall(rig.clientEnv, pages.url('meeting.html'));
    const back = await chromiumStream(
      status,
      'Chromium fragment back at 10 ms',
      (x) => x.capture_latency_us > 0,
    );
    expect(back.s.rule_min_frag).toBeNull();
    expect(back.s.capture_latency_us).toBeLessThanOrEqual(15 * MS);
    expect(back.st.needs_restart).toEqual([]);
  } finally {
    await chromium?.close();
    rmSync(dir, { recursive: true, force: true });
  }
});

test('restart-audio-service keeps an audio service with an open stream and ends an idle one', async ({
  rig,
  pages,
}) => {
  test.setTimeout(120_000);
  const env = { ...rig.clientEnv };
  // Always scoped to this test's browser: other Chromiums on the machine are not ours to restart.
  const cli = async (args: string[]) =>
    run(
      requireHost(),
      [
        'latency',
        'restart-audio-service',
        '--json',
        '--browser-pid',
        String(await chromium.browserPid()),
        ...args,
      ],
      { env, timeoutMs: 20_000 },
    );
  const status = async () => {
    const r = await run(requireHost(), ['latency', 'status', '--json'], { env, timeoutMs: 20_000 });
    return JSON.parse(r.stdout) as LatencyStatus;
  };
  const chromium = await launchChromium({ env, withExtension: false });
  try {
    const meeting = await MeetingPage.open(chromium.context, pages.url('meeting.html'));
    await meeting.ready();
    await meeting.waitForAudioFlowing(20_000);
    const { s } = await chromiumStream(status, 'a Chromium capture stream', () => true);
    const service = s.application_process_id as number;
    expect(readFileSync(`/proc/${service}/cmdline`, 'utf8')).toContain(
      '--utility-sub-type=audio.mojom.AudioService',
    );

    // In a call: kept (exit 3), still running.
    let r = await cli([]);
    expect(r.code, r.stderr).toBe(3);
    let out = JSON.parse(r.stdout) as {
      ended: { pid: number }[];
      kept: { pid: number; open_streams: number[] }[];
    };
    expect(out.kept.map((k) => k.pid)).toContain(service);
    expect(out.kept.find((k) => k.pid === service)?.open_streams).toContain(s.index);
    expect(out.ended).toEqual([]);
    expect(existsSync(`/proc/${service}`)).toBe(true);

    // After the call: ended; the next call gets a new audio service.
    await meeting.close();
    await waitFor('Chromium’s streams to close', async () => (await status()).streams.length === 0, {
      timeoutMs: 15_000,
      intervalMs: 300,
    });
    r = await cli([]);
    expect(r.code, r.stderr).toBe(0);
    out = JSON.parse(r.stdout);
    expect(out.ended.map((e) => e.pid)).toEqual([service]);
    await waitFor('the old audio service to exit', () => !existsSync(`/proc/${service}`), {
      timeoutMs: 10_000,
    });
    const again = await MeetingPage.open(chromium.context, pages.url('meeting.html'));
    await again.ready();
    await again.waitForAudioFlowing(20_000);
    const next = await chromiumStream(
      status,
      'a capture stream from a new audio service',
      (x) => x.application_process_id !== service,
    );
    expect(next.s.application_process_id).not.toBeNull();
  } finally {
    await chromium.close();
  }
});

test('pipewire-pulse: a running Chromium picks up the rule after the pipewire-pulse restart and an audio service restart', async ({
  rig,
  pages,
  audioServer,
}) => {
  test.skip(audioServer !== 'pipewire', 'pipewire-pulse only');
  test.setTimeout(150_000);
  const { dir, host } = pipewireHost(rig);
  const status = () => host<LatencyStatus>(['status']);
  const chromium = await launchChromium({ env: rig.clientEnv, withExtension: false });
  try {
    let meeting = await openCall(chromium, pages.url('meeting.html'));
    const before = await chromiumStream(status, 'Chromium at 10 ms', (x) => x.capture_latency_us > 0);
    expect(before.s.capture_latency_us).toBeLessThanOrEqual(15 * MS);
    await meeting.close();
    await waitFor('Chromium’s streams to close', async () => (await status()).streams.length === 0, {
      timeoutMs: 15_000,
      intervalMs: 300,
    });

    await host<LatencySetResult>(['set', '--capture-ms', '40', '--browser', 'chromium']);
    await rig.restart();
    const r = await host<{ ended: { pid: number }[] }>([
      'restart-audio-service',
      '--browser-pid',
      String(await chromium.browserPid()),
    ]);
    expect(r.ended.map((e) => e.pid)).toEqual([before.s.application_process_id]);

    meeting = await openCall(chromium, pages.url('meeting.html'));
    const after = await chromiumStream(status, 'Chromium at 40 ms', (x) => x.capture_latency_us >= 35 * MS);
    expect(after.s.application_process_id).not.toBe(before.s.application_process_id);
    expect(after.st.configured?.in_effect).toBe(true);
    await meeting.close();
    await host<LatencySetResult>(['reset']);
  } finally {
    await chromium.close();
    rmSync(dir, { recursive: true, force: true });
  }
});
