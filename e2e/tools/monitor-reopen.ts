// How long a reopened capture waits for its first audio on a monitor source, by the latency of what
// plays into the sink (docs/design/release-on-mute.md "Reopen on a PipeWire monitor source"). Not part
// of the suite:
//   node --import tsx e2e/tools/monitor-reopen.ts [--server pipewire|pulseaudio] [--tries N]
// A private rig (the e2e's `mic`, remapping `spk.monitor`); per player setup, N `parec --latency-msec=10`
// opens of `mic` named as Chromium's capture client, each timed from its start to its first bytes.
// Raw: e2e/artifacts/monitor-reopen-<server>.json.
import { type ChildProcess, spawn } from 'node:child_process';
import { parseArgs } from 'node:util';
import { type AudioServerKind, startAudioRig } from '../rig/audio-rig.ts';
import { median, saveArtifact } from '../tests/release-util.ts';

const { values } = parseArgs({
  options: { server: { type: 'string', default: 'pipewire' }, tries: { type: 'string', default: '7' } },
});
const server = values.server as AudioServerKind;
if (server !== 'pipewire' && server !== 'pulseaudio') {
  throw new Error(`--server ${server}: pipewire or pulseaudio`);
}
const tries = Number(values.tries);
if (!Number.isInteger(tries) || tries < 1) throw new Error(`--tries ${values.tries}: a whole number >= 1`);

/** What plays into `spk` while `mic` is reopened: nothing, or silence from a pacat at a latency. */
const PLAYERS: { name: string; args: string[] | null }[] = [
  { name: 'nothing playing', args: null },
  { name: 'pacat at its default latency (as the e2e rig plays speech)', args: [] },
  { name: 'pacat --latency-msec=100', args: ['--latency-msec=100'] },
  { name: 'pacat --latency-msec=10', args: ['--latency-msec=10'] },
];

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

const rig = await startAudioRig(server, { reader: false, tone: false });
const env = { ...rig.clientEnv };

/** ms from a 10 ms recorder's start to its first bytes. */
function firstAudioMs(): Promise<number> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const rec = spawn('parec', ['--latency-msec=10', '-d', 'mic', '--client-name=Chromium input', '--raw'], {
      env,
      stdio: ['ignore', 'pipe', 'ignore'],
    });
    const timer = setTimeout(() => {
      rec.kill();
      reject(new Error('parec: no audio within 5 s'));
    }, 5000);
    rec.on('error', reject);
    rec.stdout.once('data', () => {
      clearTimeout(timer);
      resolve(performance.now() - t0);
      rec.kill();
    });
  });
}

/** A pacat playing silence into `spk` at `args`' latency, fed as fast as it takes it. */
function startPlayer(args: string[]): ChildProcess {
  const player = spawn(
    'pacat',
    ['--playback', '-d', 'spk', '--raw', '--format=s16le', '--rate=48000', '--channels=1', ...args],
    { env, stdio: ['pipe', 'ignore', 'ignore'] },
  );
  const silence = Buffer.alloc(9600);
  const pump = () => {
    while (player.stdin?.writable && player.stdin.write(silence)) {
      /* fill the pipe */
    }
  };
  player.stdin?.on('drain', pump);
  player.stdin?.on('error', () => {}); // EPIPE once pacat is gone
  pump();
  return player;
}

const results: { player: string; first_audio_ms: number[]; median_ms: number }[] = [];
try {
  for (const p of PLAYERS) {
    const player = p.args ? startPlayer(p.args) : null;
    try {
      await pause(1500);
      const ms: number[] = [];
      for (let i = 0; i < tries; i++) {
        ms.push(Math.round(await firstAudioMs()));
        await pause(700);
      }
      results.push({ player: p.name, first_audio_ms: ms, median_ms: median(ms) });
      console.log(`${p.name}: median ${median(ms)} ms (${ms.join(', ')})`);
    } finally {
      player?.kill();
      await pause(500);
    }
  }
  saveArtifact(`monitor-reopen-${server}.json`, { server, tries, results });
} finally {
  await rig.stop();
}
