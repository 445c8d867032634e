// Host -> extension: the audio server and its streams (`audio_server_info`, `audio_streams`, `audio`
// events; micoff-pulse's types).

export type AudioServerKind = 'pulseaudio' | 'pipewire' | 'unknown';

/** micoff-pulse `ServerInfo` plus the host's `kind` and `pids`. */
export interface AudioServerInfo {
  server_string: string | null;
  socket_path: string | null;
  server_name: string;
  server_version: string;
  is_pipewire: boolean;
  pipewire_version: string | null;
  host_name: string | null;
  user_name: string | null;
  default_sink_name: string | null;
  default_source_name: string | null;
  sample_format: string;
  sample_rate_hz: number;
  channels: number;
  server_protocol_version: number | null;
  client_protocol_version: number;
  is_local: boolean | null;
  kind: AudioServerKind;
  pids: number[];
}

export type StreamKind = 'record' | 'playback';

/** Property list (`device.bus` -> `usb`, ...). */
export type Props = Record<string, string>;

/** micoff-pulse `Stream`: a record stream (source output) or playback stream (sink input). */
export interface AudioStream {
  kind: StreamKind;
  index: number;
  name: string | null;
  media_name: string | null;
  client_index: number | null;
  client_name: string | null;
  application_name: string | null;
  application_process_id: number | null;
  application_process_binary: string | null;
  /** Source (record) or sink (playback) index; 4294967295 while not linked yet. */
  device_index: number;
  device_name: string | null;
  device_description: string | null;
  /** The device's `device.bus`: `pci`, `usb`, `bluetooth`, ... */
  device_bus: string | null;
  device_class: string | null;
  device_props: Props;
  device_configured_latency_us: number | null;
  media_role: string | null;
  sample_format: string;
  sample_rate_hz: number;
  channels: number;
  buffer_latency_us: number;
  device_latency_us: number;
  fragment_size_bytes: number | null;
  fragment_latency_us: number | null;
  requested_latency_us: number | null;
  corked: boolean;
  muted: boolean;
  driver: string | null;
  resample_method: string | null;
  owner_module: number | null;
  props: Props;
}

export interface AudioStreams {
  streams: AudioStream[];
}
