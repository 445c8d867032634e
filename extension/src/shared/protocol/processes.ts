// Host -> extension: the processes micoff-host sees (`processes`) and micoff-proc's roles.
// native-host/tests/history.rs reads AUDIO_SERVER_ROLES from this file.

export type BrowserFamily = 'chromium' | 'firefox';

/** Open set: unknown roles must be tolerated (shown as-is). micoff-proc's `Role` strings. */
export type KnownRole =
  | 'browser'
  | 'renderer'
  | 'extension_renderer'
  | 'gpu'
  | 'audio_service'
  | 'network_service'
  | 'storage_service'
  | 'utility'
  | 'zygote'
  | 'crashpad'
  | 'content'
  | 'rdd'
  | 'socket'
  | 'forkserver'
  | 'audio_server'
  | 'pipewire_pulse'
  | 'pipewire'
  | 'wireplumber'
  | 'other';
export type Role = KnownRole | (string & {});

/** The roles that are the audio server (PulseAudio, or pipewire-pulse and its companions). */
export const AUDIO_SERVER_ROLES: ReadonlySet<string> = new Set([
  'audio_server',
  'pipewire_pulse',
  'pipewire',
  'wireplumber',
]);

export interface ProcessInfo {
  pid: number;
  /** 0 when there is none. */
  ppid: number;
  comm: string;
  role: Role;
  family: BrowserFamily | null;
  /** A summary of the command line (at most 160 characters, ends with `…` when cut). */
  cmdline: string;
}

export interface BrowserRef {
  pid: number;
  family: BrowserFamily | 'unknown';
  source: 'parent' | 'explicit';
}

export interface Processes {
  browser: BrowserRef | null;
  processes: ProcessInfo[];
  audio_server: ProcessInfo[];
  /** Processes left out of `processes` (the deepest of the tree) to fit one frame. */
  processes_omitted: number;
}
