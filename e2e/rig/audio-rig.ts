// A private audio server with a real signal on its default source, for capture tests without a sound
// card (docs/test-rig.md): PulseAudio (`pulseaudio -n -F rig.pa`) or PipeWire (dbus-daemon, pipewire,
// wireplumber, pipewire-pulse), one interface. Devices: null sink `spk` with tone bursts fed by `pacat`,
// its monitor remapped as the default source `mic` (a `.monitor` as default made Chromium open no record
// stream), null sink `out` as the default sink (playback must not loop into the mic), and a
// `parec --latency-msec=10 -d mic` reader that keeps the source running (a new capture gets data in
// ~50 ms instead of ~2 s). Everything is a child in its own process group, stopped by PID.
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { createConnection } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Writable } from 'node:stream';
import * as q from './pactl.ts';
import { PIPE_WRITER } from './paths.ts';
import {
  assertAlive,
  type Child,
  describeExit,
  logTail,
  RigError,
  run,
  startChild,
  stopChild,
  waitFor,
  which,
} from './proc.ts';
import { SIGNAL_RATE, speechSignal, testSignalSecond } from './signals.ts';

// The rig's devices. micoff-testkit's Rust rig (native-host/crates/micoff-testkit/src/rig.rs) uses
// the same names; a test there checks these three lines.
/** The null sink the test signal is played into; its monitor feeds `MIC`. */
export const SIGNAL_SINK = 'spk';
/** A second null sink, the default sink: what a page plays never loops back into the mic. */
export const OUTPUT_SINK = 'out';
/** `module-remap-source` over `spk.monitor`, the default source. */
export const MIC = 'mic';

export type AudioServerKind = 'pulseaudio' | 'pipewire';

/** The echo path's loopback latency. module-loopback asks a third of it of the sink it plays into, so
 * `spk` (and the mic reading its monitor) runs at 50 ms and a capture of up to 50 ms gets what it asks. */
export const ECHO_LOOPBACK_MS = 150;
const ECHO_LOOPBACK_ARGS = [
  `source=${OUTPUT_SINK}.monitor`,
  `sink=${SIGNAL_SINK}`,
  `latency_msec=${ECHO_LOOPBACK_MS}`,
  'source_dont_move=true',
  'sink_dont_move=true',
];

export interface AudioRigOptions {
  /** Where the per-run folder goes (default: os.tmpdir(); socket paths must stay short). */
  parentDir?: string;
  /** Extra properties of the `mic` source, e.g. `{ 'device.bus': 'bluetooth' }`. */
  sourceProperties?: Record<string, string>;
  /** Keep the low-latency `parec` reader on `mic` (default true). */
  reader?: boolean;
  /** Play the test tone into `spk` (default true). */
  tone?: boolean;
  /** An echo path: what the browser plays comes back through the mic (default none). Kept across
   * `restart()`.
   *   'direct': `spk` is the default sink. The mic, a remap of `spk.monitor`, then runs at whatever
   *     latency the browser's own playback asks: a capture asking 40 ms was granted 10 ms (PulseAudio).
   *   'loopback': `out` stays the default sink and `module-loopback` plays it into `spk` with a latency
   *     of its own (ECHO_LOOPBACK_MS), as a speaker's sound reaches a sound card's mic: the capture gets
   *     the latency it asks (up to 50 ms), whatever the playback's. */
  echoPath?: 'direct' | 'loopback';
  /** PipeWire only: `spk`, `out` and `mic` made by PipeWire itself (a `pipewire.conf.d` drop-in: two
   * null-audio-sink nodes and a loopback whose playback side is the source `mic`), not modules of
   * pipewire-pulse, so they outlive a restart of pipewire-pulse alone (`PipeWireRig.restartPulse`).
   * No echo path or source properties with it. */
  devicesInPipeWire?: boolean;
  /** Deadline for each part to come up. */
  startTimeoutMs?: number;
  /** Keep the run folder (logs) after stop (default: env MICOFF_KEEP_RIG=1). */
  keep?: boolean;
}

export interface AudioRig {
  readonly kind: AudioServerKind;
  /** The per-run folder (logs live here). */
  readonly dir: string;
  /** `unix:<socket>`: what PULSE_SERVER must say for clients (Chromium, micoff-host, pactl). */
  readonly server: string;
  readonly socket: string;
  /** The server's private $XDG_CONFIG_HOME (pipewire-pulse reads its `pipewire-pulse.conf.d/` drop-ins
   * from there when it starts). */
  readonly configHome: string;
  /** Environment for audio clients: the caller's environment plus PULSE_SERVER. */
  readonly clientEnv: NodeJS.ProcessEnv;
  /** PIDs of the server process(es) (pulseaudio; pipewire + wireplumber + pipewire-pulse). */
  serverPids(): number[];
  /** PIDs of the rig's own clients (tone, reader): keep them out of browser figures. */
  clientPids(): number[];
  pactl: q.Pactl;
  info(): Promise<q.PactlInfo>;
  recordStreams(): Promise<q.RecordStream[]>;
  /** Plays a test signal into `sink` until the rig stops: the tone bursts, or `speech` (a pitch that
   * moves every 30 ms, never a steady tone a noise suppressor learns as noise). */
  playInto(sink: string, signal: 'tone' | 'speech'): Promise<void>;
  /** A source whose data comes at a pace of its own, as a sound card's does (unlike `mic`, which
   * follows the null sink it monitors): module-pipe-source fed the speech-like signal in real time by a
   * writer process (e2e/rig/pipe-writer.ts). Not module-sine-source: PulseAudio's has a fixed 2 s
   * latency (its data comes in 2 s blocks, module-sine-source.c), and pipewire-pulse has none. */
  addClockedSource(name: string): Promise<void>;
  /** Stops and starts the server on the same socket (tone and reader come back too); `killed`: the
   * server processes SIGKILLed first, as a crash ends them. */
  restart(opts?: { killed?: boolean }): Promise<void>;
  stop(): Promise<void>;
  /** The last lines of every log, for failure reports. */
  logs(): string;
}

/** Feeds the tone to a pacat's stdin forever; the pipe's back-pressure paces it at playback speed. */
function feedTone(stdin: Writable, second: Buffer): void {
  let stopped = false;
  stdin.on('error', () => {
    stopped = true; // EPIPE when pacat goes away (server restart/stop)
  });
  const pump = () => {
    while (!stopped && stdin.write(second)) {
      /* fill the pipe */
    }
    if (!stopped) stdin.once('drain', pump);
  };
  pump();
}

abstract class BaseRig implements AudioRig {
  abstract readonly kind: AudioServerKind;
  readonly dir: string;
  readonly socket: string;
  readonly server: string;
  readonly configHome: string;
  readonly clientEnv: NodeJS.ProcessEnv;
  readonly pactl: q.Pactl;
  protected readonly opts: Required<Omit<AudioRigOptions, 'parentDir' | 'echoPath'>> & {
    echoPath: NonNullable<AudioRigOptions['echoPath']> | 'none';
  };
  protected servers: Child[] = [];
  protected clients: Child[] = [];
  private stopped = false;

  constructor(socketRel: string, options: AudioRigOptions) {
    this.opts = {
      sourceProperties: options.sourceProperties ?? {},
      reader: options.reader ?? true,
      tone: options.tone ?? true,
      echoPath: options.echoPath ?? 'none',
      devicesInPipeWire: options.devicesInPipeWire ?? false,
      startTimeoutMs: options.startTimeoutMs ?? 15_000,
      keep: options.keep ?? process.env.MICOFF_KEEP_RIG === '1',
    };
    for (const tool of ['pactl', 'pacat', 'parec']) {
      if (!which(tool)) throw new RigError(tool, 'not installed (run scripts/ensure-deps.sh)');
    }
    this.dir = mkdtempSync(join(options.parentDir ?? tmpdir(), 'micoff-rig-'));
    this.socket = join(this.dir, socketRel);
    this.server = `unix:${this.socket}`;
    this.configHome = join(this.dir, 'home', '.config');
    // Clients only need PULSE_SERVER; drop a desktop's PipeWire/Pulse hints so nothing leaks out.
    const env: NodeJS.ProcessEnv = { ...process.env, PULSE_SERVER: this.server };
    delete env.PIPEWIRE_REMOTE;
    delete env.PULSE_COOKIE;
    this.clientEnv = env;
    this.pactl = q.pactlFor(env);
  }

  /** `spk` for the direct echo path, else `out`. */
  protected get defaultSink(): string {
    return this.opts.echoPath === 'direct' ? SIGNAL_SINK : OUTPUT_SINK;
  }

  protected path(...p: string[]): string {
    return join(this.dir, ...p);
  }

  protected mkdirs(...rel: string[]): void {
    for (const r of rel) mkdirSync(this.path(r), { recursive: true, mode: 0o700 });
  }

  protected abstract startServer(): Promise<void>;

  serverPids(): number[] {
    return this.servers.filter((c) => !c.exit && c.name !== 'dbus-daemon').map((c) => c.pid);
  }

  clientPids(): number[] {
    return this.clients.filter((c) => !c.exit).map((c) => c.pid);
  }

  info(): Promise<q.PactlInfo> {
    return q.info(this.pactl);
  }

  recordStreams(): Promise<q.RecordStream[]> {
    return q.recordStreams(this.pactl);
  }

  protected checkServers = (): void => {
    for (const c of this.servers) assertAlive(c);
  };

  /** Socket exists and `pactl info` answers, while every server child is alive. */
  protected async waitPulseReady(part: string, logFile: string): Promise<void> {
    try {
      await waitFor(
        `${part}: \`pactl info\` to answer on ${this.socket}`,
        async () => (await this.info()).serverName,
        {
          timeoutMs: this.opts.startTimeoutMs,
          intervalMs: 100,
          check: this.checkServers,
        },
      );
    } catch (e) {
      if (e instanceof RigError) throw e;
      throw new RigError(part, (e as Error).message, logFile);
    }
  }

  async start(): Promise<this> {
    try {
      await this.startServer();
      await this.startClients();
    } catch (e) {
      await this.stop();
      throw e;
    }
    return this;
  }

  async playInto(sink: string, signal: 'tone' | 'speech'): Promise<void> {
    const player = this.startPlayer(
      `${signal} into ${sink} (pacat)`,
      sink,
      `micoff-rig-${signal}-${sink}`,
      `play-${sink}.log`,
      signal === 'speech' ? speechSignal() : testSignalSecond(),
    );
    await waitFor(
      `${signal} playing into ${sink}`,
      async () =>
        (
          JSON.parse(await this.pactl(['-f', 'json', 'list', 'sink-inputs'])) as {
            properties?: Record<string, string>;
          }[]
        ).some((x) => x.properties?.['application.name'] === `micoff-rig-${signal}-${sink}`),
      { check: () => assertAlive(player) },
    );
  }

  /** A `pacat` client `clientName` playing `chunk` into `sink` forever, logging to `log`. */
  private startPlayer(name: string, sink: string, clientName: string, log: string, chunk: Buffer): Child {
    const player = startChild(
      name,
      'pacat',
      [
        '--playback',
        '-d',
        sink,
        '--raw',
        '--format=s16le',
        `--rate=${SIGNAL_RATE}`,
        '--channels=1',
        `--client-name=${clientName}`,
      ],
      this.path(log),
      { env: this.clientEnv, stdin: 'pipe' },
    );
    this.clients.push(player);
    if (player.proc.stdin) feedTone(player.proc.stdin, chunk);
    return player;
  }

  async addClockedSource(name: string): Promise<void> {
    const fifo = this.path(`${name}.fifo`);
    await this.pactl([
      'load-module',
      'module-pipe-source',
      `source_name=${name}`,
      `file=${fifo}`,
      'format=s16le',
      `rate=${SIGNAL_RATE}`,
      'channels=1',
    ]);
    await this.sourceListed(name);
    await waitFor(`${fifo} made by the server`, () => existsSync(fifo));
    this.clients.push(
      startChild(
        `writer of ${name}`,
        process.execPath,
        ['--import', 'tsx', PIPE_WRITER, fifo],
        this.path(`${name}-writer.log`),
      ),
    );
  }

  /** Waits until the server lists a source by this name. */
  protected async sourceListed(name: string): Promise<void> {
    await waitFor(`the source ${name}`, async () =>
      (await this.pactl(['list', 'short', 'sources'])).split('\n').some((l) => l.split('\t')[1] === name),
    );
  }

  protected async startClients(): Promise<void> {
    const env = this.clientEnv;
    if (this.opts.tone)
      this.startPlayer('tone (pacat)', SIGNAL_SINK, 'micoff-rig-tone', 'tone.log', testSignalSecond());
    if (this.opts.reader) {
      this.clients.push(
        startChild(
          'reader (parec)',
          'parec',
          ['--latency-msec=10', '-d', MIC, '--raw', '--client-name=micoff-rig-reader'],
          this.path('reader.log'),
          { env, stdout: 'ignore' },
        ),
      );
    }
    // Both show up as streams at the server: wait for them, failing fast if one dies.
    const wantPlayback = this.opts.tone ? 1 : 0;
    const wantRecord = this.opts.reader ? 1 : 0;
    await waitFor(
      'the rig tone and reader streams at the server',
      async () => {
        const [si, so] = await Promise.all([
          this.pactl(['-f', 'json', 'list', 'sink-inputs']),
          this.pactl(['-f', 'json', 'list', 'source-outputs']),
        ]);
        const mine = (s: string) =>
          (JSON.parse(s) as { properties?: Record<string, string> }[]).filter((x) =>
            /^micoff-rig-/.test(x.properties?.['application.name'] ?? ''),
          ).length;
        return mine(si) >= wantPlayback && mine(so) >= wantRecord;
      },
      {
        timeoutMs: this.opts.startTimeoutMs,
        intervalMs: 100,
        check: () => {
          this.checkServers();
          for (const c of this.clients) assertAlive(c);
        },
      },
    );
  }

  async restart(opts: { killed?: boolean } = {}): Promise<void> {
    if (opts.killed) for (const c of [...this.servers].reverse()) await stopChild(c, 0);
    await this.stopAll();
    this.stopped = false;
    await this.startServer();
    await this.startClients();
  }

  private async stopAll(): Promise<void> {
    for (const c of this.clients.reverse()) await stopChild(c);
    this.clients = [];
    // Stop in reverse start order (pipewire-pulse before pipewire, dbus last).
    for (const c of [...this.servers].reverse()) await stopChild(c);
    this.servers = [];
  }

  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    await this.stopAll();
    if (!this.opts.keep) rmSync(this.dir, { recursive: true, force: true });
  }

  logs(): string {
    const state = [...this.servers, ...this.clients].map(
      (c) => `${c.name}: pid ${c.pid}, ${describeExit(c)}`,
    );
    const files = readdirSync(this.dir).filter((f) => f.endsWith('.log'));
    return [state.join('\n'), ...files.map((f) => `--- ${f}\n${logTail(this.path(f), 20)}`)].join('\n');
  }

  /** `spk`, `out` and `mic` exist and are the defaults (the server may start with a failed module). */
  protected async verifyDevices(part: string, logFile: string): Promise<void> {
    try {
      await waitFor(
        `sinks \`spk\` and \`out\`, source \`mic\`, defaults \`${this.defaultSink}\` / \`mic\``,
        async () => {
          const [i, sinks, srcs] = await Promise.all([
            this.info(),
            this.pactl(['-f', 'json', 'list', 'short', 'sinks']),
            q.sources(this.pactl),
          ]);
          const sinkNames = (JSON.parse(sinks) as { name?: string }[]).map((s) => s.name);
          return (
            sinkNames.includes(SIGNAL_SINK) &&
            sinkNames.includes(OUTPUT_SINK) &&
            srcs.some((s) => s.name === MIC) &&
            i.defaultSource === MIC &&
            i.defaultSink === this.defaultSink
          );
        },
        { timeoutMs: 5000, intervalMs: 100, check: this.checkServers },
      );
    } catch (e) {
      if (e instanceof RigError) throw e;
      throw new RigError(part, (e as Error).message, logFile);
    }
  }

  protected sourcePropsArg(): string {
    const entries = Object.entries(this.opts.sourceProperties);
    if (entries.length === 0) return '';
    // PulseAudio's proplist syntax: key=value pairs; quote values so spaces survive.
    return ` source_properties="${entries.map(([k, v]) => `${k}='${v}'`).join(' ')}"`;
  }
}

export class PulseAudioRig extends BaseRig {
  readonly kind = 'pulseaudio' as const;

  constructor(options: AudioRigOptions = {}) {
    super('pulse.sock', options);
    if (!which('pulseaudio')) throw new RigError('pulseaudio', 'not installed (run scripts/ensure-deps.sh)');
    this.mkdirs('runtime', 'state', 'home');
    writeFileSync(
      this.path('rig.pa'),
      [
        `load-module module-native-protocol-unix auth-anonymous=1 socket=${this.socket}`,
        `load-module module-null-sink sink_name=${SIGNAL_SINK}`,
        `load-module module-null-sink sink_name=${OUTPUT_SINK}`,
        `load-module module-remap-source source_name=${MIC} master=${SIGNAL_SINK}.monitor${this.sourcePropsArg()}`,
        ...(this.opts.echoPath === 'loopback'
          ? [`load-module module-loopback ${ECHO_LOOPBACK_ARGS.join(' ')}`]
          : []),
        `set-default-sink ${this.defaultSink}`,
        `set-default-source ${MIC}`,
        '',
      ].join('\n'),
    );
  }

  protected async startServer(): Promise<void> {
    const log = this.path('pulse.log');
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      XDG_RUNTIME_DIR: this.path('runtime'),
      PULSE_RUNTIME_PATH: this.path('runtime'),
      PULSE_STATE_PATH: this.path('state'),
      HOME: this.path('home'),
      XDG_CONFIG_HOME: this.configHome,
    };
    delete env.PULSE_SERVER;
    delete env.DBUS_SESSION_BUS_ADDRESS;
    const pa = startChild(
      'pulseaudio',
      'pulseaudio',
      [
        '--daemonize=no',
        '--system=no',
        '--exit-idle-time=-1',
        '-n',
        '-F',
        this.path('rig.pa'),
        '--disallow-exit=yes',
        '--disallow-module-loading=no',
        '--use-pid-file=no',
        `--log-target=file:${log}`,
      ],
      this.path('pulse.stderr.log'),
      { env },
    );
    this.servers.push(pa);
    // pulseaudio logs to its own file; a failure before logging starts lands in stderr.
    try {
      await this.waitPulseReady('pulseaudio', log);
    } catch (e) {
      throw new RigError('pulseaudio', `${(e as Error).message}\nstderr: ${logTail(pa.logFile, 10)}`);
    }
    // PulseAudio keeps running when a line of rig.pa fails (even under `.fail`): check the result.
    await this.verifyDevices('pulseaudio (rig.pa)', log);
  }
}

export class PipeWireRig extends BaseRig {
  readonly kind = 'pipewire' as const;

  constructor(options: AudioRigOptions = {}) {
    super('run/pulse/native', options);
    for (const tool of ['pipewire', 'wireplumber', 'pipewire-pulse', 'dbus-daemon']) {
      if (!which(tool)) throw new RigError(tool, 'not installed (run scripts/ensure-deps.sh)');
    }
    this.mkdirs('run', 'home', 'home/.config', 'home/.local/state', 'home/.local/share');
  }

  /** The servers' environment: everything private to the rig's folder. */
  private serverEnv(): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {
      ...process.env,
      XDG_RUNTIME_DIR: this.path('run'),
      PIPEWIRE_RUNTIME_DIR: this.path('run'),
      HOME: this.path('home'),
      XDG_CONFIG_HOME: this.configHome,
      XDG_STATE_HOME: this.path('home', '.local', 'state'),
      XDG_DATA_HOME: this.path('home', '.local', 'share'),
      DBUS_SESSION_BUS_ADDRESS: `unix:path=${this.path('bus')}`,
      DISPLAY: '',
    };
    delete env.PULSE_SERVER;
    delete env.PIPEWIRE_REMOTE;
    return env;
  }

  private get startOpts() {
    return { timeoutMs: this.opts.startTimeoutMs, intervalMs: 50, check: this.checkServers };
  }

  /** `pw-cli` against this rig's PipeWire itself (clients of the rig reach only pipewire-pulse). */
  async pwCli(args: string[]): Promise<string> {
    const env: NodeJS.ProcessEnv = { ...process.env, PIPEWIRE_RUNTIME_DIR: this.path('run') };
    delete env.PIPEWIRE_REMOTE;
    const r = await run('pw-cli', args, { env, timeoutMs: 5000 });
    if (r.code !== 0) throw new Error(`pw-cli ${args.join(' ')} failed (${r.code}): ${r.stderr.trim()}`);
    return r.stdout;
  }

  protected async startServer(): Promise<void> {
    const bus = this.path('bus');
    rmSync(bus, { force: true });
    const env = this.serverEnv();
    if (this.opts.devicesInPipeWire) this.writeDeviceDropIn();
    const opts = this.startOpts;

    // WirePlumber needs a session bus; a private one (what dbus-run-session would give).
    const dbus = startChild(
      'dbus-daemon',
      'dbus-daemon',
      ['--session', '--nofork', '--nopidfile', `--address=unix:path=${bus}`],
      this.path('dbus.log'),
      { env },
    );
    this.servers.push(dbus);
    await this.waitPart('dbus-daemon', dbus, `the session bus socket ${bus}`, () => existsSync(bus), opts);

    const pw = startChild('pipewire', 'pipewire', [], this.path('pipewire.log'), { env });
    this.servers.push(pw);
    const pwSock = this.path('run', 'pipewire-0');
    // Accepting, not only there: on a busy machine WirePlumber started on a socket that pipewire had
    // bound but not yet served, and exited ("Failed to connect to PipeWire").
    await this.waitPart('pipewire', pw, `its socket ${pwSock} to accept`, () => accepts(pwSock), opts);

    const wp = startChild('wireplumber', 'wireplumber', [], this.path('wireplumber.log'), { env });
    this.servers.push(wp);
    const pp = await this.startPulse();

    // The same devices as rig.pa, loaded at run time (pipewire-pulse implements these two modules),
    // unless PipeWire made them itself.
    try {
      if (!this.opts.devicesInPipeWire) {
        await this.pactl(['load-module', 'module-null-sink', `sink_name=${SIGNAL_SINK}`]);
        await this.pactl(['load-module', 'module-null-sink', `sink_name=${OUTPUT_SINK}`]);
        await this.pactl([
          'load-module',
          'module-remap-source',
          `source_name=${MIC}`,
          `master=${SIGNAL_SINK}.monitor`,
          ...(this.sourcePropsArg() ? [this.sourcePropsArg().trim()] : []),
        ]);
      }
      await this.devicesUp();
    } catch (e) {
      if (e instanceof RigError) throw e;
      throw new RigError('pipewire-pulse (devices)', (e as Error).message, pp.logFile);
    }
  }

  private async startPulse(): Promise<Child> {
    const pp = startChild('pipewire-pulse', 'pipewire-pulse', [], this.path('pipewire-pulse.log'), {
      env: this.serverEnv(),
    });
    this.servers.push(pp);
    await this.waitPulseReady('pipewire-pulse', pp.logFile);
    return pp;
  }

  /** Stops pipewire-pulse alone (SIGTERM, as `systemctl --user restart pipewire-pulse` does) and starts
   * it again on the same socket; PipeWire and WirePlumber run on. Its clients (the rig's tone and
   * reader, a signal from `playInto`) go with it: the tone and reader are started again, a signal must
   * be played again. Needs `devicesInPipeWire` (else the devices, its modules, would go too). */
  async restartPulse(): Promise<void> {
    if (!this.opts.devicesInPipeWire)
      throw new Error('restartPulse needs devicesInPipeWire: the devices are modules of pipewire-pulse');
    const pp = this.servers.find((c) => c.name === 'pipewire-pulse');
    for (const c of this.clients.reverse()) await stopChild(c);
    this.clients = [];
    if (pp) {
      await stopChild(pp);
      this.servers = this.servers.filter((c) => c !== pp);
    }
    const fresh = await this.startPulse();
    try {
      await this.devicesUp();
    } catch (e) {
      if (e instanceof RigError) throw e;
      throw new RigError('pipewire-pulse (devices after its restart)', (e as Error).message, fresh.logFile);
    }
    await this.startClients();
  }

  /** The devices as PipeWire's own objects (see `devicesInPipeWire`), read by pipewire at its start. */
  private writeDeviceDropIn(): void {
    if (this.opts.echoPath !== 'none' || Object.keys(this.opts.sourceProperties).length > 0)
      throw new Error('devicesInPipeWire has no echo path or source properties');
    const nullSink = (name: string) => `  { factory = adapter
    args = {
      factory.name = support.null-audio-sink
      node.name = "${name}"
      node.description = "${name}"
      media.class = "Audio/Sink"
      audio.position = [ FL FR ]
      monitor.channel-volumes = true
    }
  }`;
    const dir = join(this.configHome, 'pipewire', 'pipewire.conf.d');
    mkdirSync(dir, { recursive: true });
    writeFileSync(
      join(dir, 'micoff-rig-devices.conf'),
      `# micoff e2e rig: the devices of rig.pa made by PipeWire itself (e2e/rig/audio-rig.ts).
context.objects = [
${nullSink(SIGNAL_SINK)}
${nullSink(OUTPUT_SINK)}
]
context.modules = [
  { name = libpipewire-module-loopback
    args = {
      node.description = "${MIC}"
      capture.props = {
        node.name = "${MIC}.capture"
        target.object = "${SIGNAL_SINK}"
        stream.capture.sink = true
        audio.position = [ FL FR ]
      }
      playback.props = {
        node.name = "${MIC}"
        media.class = "Audio/Source"
        audio.position = [ FL FR ]
      }
    }
  }
]
`,
    );
  }

  /** `mic` and the default sink's monitor exist, then both made the defaults. */
  private async devicesUp(): Promise<void> {
    const opts = this.startOpts;
    // WirePlumber creates the nodes asynchronously: wait until `mic` and the default sink (its
    // monitor) exist before making them default ("Not supported" otherwise, on a busy machine).
    const wanted = [MIC, `${this.defaultSink}.monitor`];
    await waitFor(
      `the nodes ${wanted.join(', ')}`,
      async () => {
        const names = new Set((await q.sources(this.pactl)).map((s) => s.name));
        return wanted.every((n) => names.has(n));
      },
      opts,
    );
    if (this.opts.echoPath === 'loopback') {
      await this.pactl(['load-module', 'module-loopback', ...ECHO_LOOPBACK_ARGS]);
    }
    // Made default once WirePlumber takes it: with three rigs starting at once a sink listed a moment
    // ago still answered "Not supported" (a fresh-clone run, 2026-11-29), so each is asked again
    // until it is taken or the rig's timeout ends.
    const makeDefault = (what: string, args: string[], done: (i: q.PactlInfo) => boolean) =>
      waitFor(
        what,
        async () => {
          try {
            await this.pactl(args);
          } catch {
            return null;
          }
          return done(await this.info()) ? true : null;
        },
        opts,
      );
    await makeDefault(
      `\`${this.defaultSink}\` as the default sink`,
      ['set-default-sink', this.defaultSink],
      (i) => i.defaultSink === this.defaultSink,
    );
    await makeDefault(
      '`mic` as the default source',
      ['set-default-source', MIC],
      (i) => i.defaultSource === MIC,
    );
  }

  private async waitPart(
    part: string,
    child: Child,
    what: string,
    cond: () => boolean | Promise<boolean>,
    opts: { timeoutMs: number; intervalMs: number; check: () => void },
  ): Promise<void> {
    try {
      await waitFor(`${part}: ${what}`, cond, opts);
    } catch (e) {
      if (e instanceof RigError) throw e;
      throw new RigError(part, (e as Error).message, child.logFile);
    }
  }
}

/** Starts the rig of the given kind; on failure everything it started is stopped again. */
export function startAudioRig(kind: AudioServerKind, options: AudioRigOptions = {}): Promise<AudioRig> {
  const rig = kind === 'pipewire' ? new PipeWireRig(options) : new PulseAudioRig(options);
  return rig.start();
}

/** Whether a unix socket accepts a connection now (closed again at once). */
function accepts(path: string): Promise<boolean> {
  if (!existsSync(path)) return Promise.resolve(false);
  return new Promise((resolve) => {
    const c = createConnection(path);
    c.once('connect', () => {
      c.destroy();
      resolve(true);
    });
    c.once('error', () => resolve(false));
  });
}
