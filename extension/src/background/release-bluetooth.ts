// Device-aware release: which audio-server source does Chromium's capture use, and is it Bluetooth?
// Releasing a Bluetooth headset's mic switches it between its call profile (HFP/HSP) and its music
// profile (A2DP): an audible glitch and 1-2 s of silence on unmute, so by default it is kept open.
// The host reports record streams with their source's properties (device.bus). A web track's deviceId
// is a per-origin hash, so the source is matched by the track's label (Chromium on PulseAudio uses the
// source's description); failing that, any Chromium record stream on a Bluetooth source counts.
import type { AudioStream } from '../shared/protocol.ts';

/** Fields newer hosts add to AudioStream (read defensively: older hosts lack them). */
interface StreamSourceInfo {
  device_bus?: string | null;
  device_props?: Record<string, string> | null;
  device_description?: string | null;
}

export function isChromiumStream(s: AudioStream): boolean {
  return /chrom/i.test(`${s.application_process_binary ?? ''} ${s.application_name ?? ''}`);
}

function busOf(s: AudioStream): string | null {
  const x = s as AudioStream & StreamSourceInfo;
  return x.device_bus ?? x.device_props?.['device.bus'] ?? null;
}

function descriptionOf(s: AudioStream): string | null {
  const x = s as AudioStream & StreamSourceInfo;
  return x.device_description ?? x.device_props?.['device.description'] ?? null;
}

export interface SourceVerdict {
  bluetooth: boolean;
  /** The record stream the verdict is about (null when the host sees none). */
  stream: AudioStream | null;
}

export function classifySource(streams: readonly AudioStream[], label: string): SourceVerdict {
  const chromium = streams.filter((s) => s.kind === 'record' && isChromiumStream(s));
  const byLabel = label ? chromium.filter((s) => descriptionOf(s) === label) : [];
  const candidates = byLabel.length > 0 ? byLabel : chromium;
  const bt = candidates.find((s) => busOf(s) === 'bluetooth');
  return { bluetooth: bt !== undefined, stream: bt ?? candidates[0] ?? null };
}
