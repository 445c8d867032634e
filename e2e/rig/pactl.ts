// Queries against a (private) PulseAudio / pipewire-pulse server through `pactl -f json` (pactl >= 16;
// Debian 12 ships 16.1). Pure parsers are exported for unit tests.
import { run } from './proc.ts';

export interface PactlInfo {
  serverName: string;
  serverVersion: string;
  defaultSource: string;
  defaultSink: string;
}

/** A record stream (source output) as the server sees it. */
export interface RecordStream {
  index: number;
  source: number;
  client: number | null;
  corked: boolean;
  applicationName: string | null;
  processId: number | null;
  processBinary: string | null;
  /** Buffer latency and source latency in microseconds (pactl's "buffer_latency_usec" etc.). */
  bufferLatencyUs: number | null;
  sourceLatencyUs: number | null;
  properties: Record<string, string>;
}

/** A playback stream (sink input): fewer fields are needed of it. */
export interface PlaybackStream {
  index: number;
  sink: number;
  corked: boolean;
  applicationName: string | null;
  processBinary: string | null;
  bufferLatencyUs: number | null;
  properties: Record<string, string>;
}

export interface Source {
  index: number;
  name: string;
  properties: Record<string, string>;
}

export type Pactl = (args: string[], timeoutMs?: number) => Promise<string>;

/** A `pactl` bound to one server; throws with pactl's stderr on failure. */
export function pactlFor(env: NodeJS.ProcessEnv): Pactl {
  return async (args, timeoutMs = 5000) => {
    const r = await run('pactl', args, { env, timeoutMs });
    if (r.code !== 0) throw new Error(`pactl ${args.join(' ')} failed (${r.code}): ${r.stderr.trim()}`);
    return r.stdout;
  };
}

type Json = Record<string, unknown>;
const num = (v: unknown): number | null => {
  if (typeof v === 'number') return v;
  if (typeof v === 'string' && v.trim() !== '' && Number.isFinite(Number(v))) return Number(v);
  return null;
};
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);
const props = (v: unknown): Record<string, string> => {
  const out: Record<string, string> = {};
  if (v && typeof v === 'object') for (const [k, x] of Object.entries(v)) out[k] = String(x);
  return out;
};

export function parseInfo(json: string): PactlInfo {
  const j = JSON.parse(json) as Json;
  return {
    serverName: str(j.server_name) ?? '',
    serverVersion: str(j.server_version) ?? '',
    defaultSource: str(j.default_source_name) ?? '',
    defaultSink: str(j.default_sink_name) ?? '',
  };
}

export function parseSourceOutputs(json: string): RecordStream[] {
  const list = JSON.parse(json) as Json[];
  return list.map((o) => {
    const p = props(o.properties);
    return {
      index: num(o.index) ?? -1,
      source: num(o.source) ?? -1,
      client: num(o.client),
      corked: o.corked === true,
      applicationName: p['application.name'] ?? null,
      processId: num(p['application.process.id']),
      processBinary: p['application.process.binary'] ?? null,
      bufferLatencyUs: num(o.buffer_latency_usec),
      sourceLatencyUs: num(o.source_latency_usec),
      properties: p,
    };
  });
}

export function parseSinkInputs(json: string): PlaybackStream[] {
  return (JSON.parse(json) as Json[]).map((o) => {
    const p = props(o.properties);
    return {
      index: num(o.index) ?? -1,
      sink: num(o.sink) ?? -1,
      corked: o.corked === true,
      applicationName: p['application.name'] ?? null,
      processBinary: p['application.process.binary'] ?? null,
      bufferLatencyUs: num(o.buffer_latency_usec),
      properties: p,
    };
  });
}

export function parseSources(json: string): Source[] {
  return (JSON.parse(json) as Json[]).map((s) => ({
    index: num(s.index) ?? -1,
    name: str(s.name) ?? '',
    properties: props(s.properties),
  }));
}

export async function info(pactl: Pactl): Promise<PactlInfo> {
  return parseInfo(await pactl(['-f', 'json', 'info']));
}

export async function recordStreams(pactl: Pactl): Promise<RecordStream[]> {
  return parseSourceOutputs(await pactl(['-f', 'json', 'list', 'source-outputs']));
}

export async function playbackStreams(pactl: Pactl): Promise<PlaybackStream[]> {
  return parseSinkInputs(await pactl(['-f', 'json', 'list', 'sink-inputs']));
}

export async function sources(pactl: Pactl): Promise<Source[]> {
  return parseSources(await pactl(['-f', 'json', 'list', 'sources']));
}

/** Is this record stream Chromium's (by the binary / application name the client announced)? */
export function isChromium(s: RecordStream): boolean {
  return /chrom/i.test(`${s.processBinary ?? ''} ${s.applicationName ?? ''}`);
}

/** Is this stream Firefox's (by the application name / binary its client announced)? */
export function isFirefox(s: Pick<RecordStream, 'applicationName' | 'processBinary'>): boolean {
  return /firefox/i.test(`${s.applicationName ?? ''} ${s.processBinary ?? ''}`);
}
