// Host -> extension: capture latency (`latency_status`, `latency_set`; docs/design/capture-latency.md).

/** Which audio server `latency_status` found (pipewire-pulse is PipeWire's Pulse server). */
export type LatencyServerKind = 'pulseaudio' | 'pipewire_pulse' | 'unknown';
/** How micoff applies a capture latency: a pipewire-pulse rule for the browsers' capture clients (and
 * Chromium's playback client), or
 * PULSE_LATENCY_MSEC in the browsers' launch environment (PulseAudio, and the fallback). */
export type LatencyMechanism = 'pipewire_pulse_rule' | 'launch_environment';
/** A browser micoff configures. */
export type LatencyBrowser = 'chromium' | 'chrome' | 'firefox';

/** What micoff has configured, read back from its own files (null in `LatencyStatus.configured`
 * when nothing). */
export interface LatencyConfigured {
  capture_ms: number;
  mechanism: LatencyMechanism;
  browsers: LatencyBrowser[];
  /** The files micoff wrote. */
  files: string[];
  /** Every capture stream of those browsers gets at least `capture_ms` (less 5 ms); null while none is
   * open (nothing to prove it by). */
  in_effect: boolean | null;
}

/** Another reader of the same source whose lower latency the server grants instead (PulseAudio). */
export interface LatencyHolder {
  index: number;
  client_name: string | null;
  application_name: string | null;
  application_process_id: number | null;
  application_process_binary: string | null;
  latency_us: number;
}

/** A browser's record stream at the server, with what it asked and what it was granted. */
export interface LatencyStream {
  index: number;
  browser: LatencyBrowser;
  client_name: string | null;
  application_process_id: number | null;
  source_name: string | null;
  /** PULSE_LATENCY_MSEC in the stream's process environment (null: unset or unreadable). */
  launch_env_latency_ms: number | null;
  requested_latency_us: number | null;
  /** The stream's buffer latency as the server reports it (pactl "Buffer Latency"; 0 on pipewire-pulse). */
  granted_latency_us: number;
  /** The record fragment, where the server shows it (pipewire-pulse). */
  granted_fragment_us: number | null;
  /** What the stream actually gets: the fragment where known, else the buffer latency. */
  capture_latency_us: number;
  source_configured_latency_us: number | null;
  /** `pulse.min.frag` on the stream (a pipewire-pulse rule matched its client). */
  rule_min_frag: string | null;
  held_down_by: LatencyHolder[];
}

export interface LatencyStatus {
  server: { kind: LatencyServerKind; version: string | null; mechanism: LatencyMechanism };
  configured: LatencyConfigured | null;
  streams: LatencyStream[];
  /** What would need a restart for the configuration (or its removal) to be in effect. */
  needs_restart: string[];
  /** Explanations for a person (why not in effect, what to restart and how). */
  notes: string[];
}

export interface LatencySetResult {
  /** Null for a reset. */
  capture_ms: number | null;
  mechanism: LatencyMechanism | null;
  dry_run: boolean;
  /** Files written or removed (or that would be, with `dry_run`). */
  changed_files: string[];
  /** Files micoff left alone because it did not write them. */
  skipped_files: string[];
  needs_restart: string[];
  /** What happened, for a person. */
  message: string;
}
