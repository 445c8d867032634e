// Device-aware release: which audio-server source does Chromium's capture use, and is it Bluetooth?
// Releasing a Bluetooth headset's mic switches its profile (HFP/HSP <-> A2DP): a glitch and seconds of
// silence on unmute, so by default it is kept open. A web track's deviceId is a per-origin hash, so the
// source is matched by the track's label (the source's description; "Default": the server's default
// source). A label that names no source Chromium records from gets no verdict: no fallback to other
// tabs' streams.
import { isBrowserStream } from '../shared/browser-streams.ts';
import type { AudioStream } from '../shared/protocol.ts';

/** Fields newer hosts add to AudioStream (read defensively: older hosts lack them). */
interface StreamSourceInfo {
  device_bus?: string | null;
  device_props?: Record<string, string> | null;
  device_description?: string | null;
}

export function isChromiumStream(s: AudioStream): boolean {
  return isBrowserStream(s, 'chrome');
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

/** Chromium's label for the default device: "Default", or "Default - <device>" where it knows the
 * device's name. Returns the device part (possibly empty) or null when the label is not the default's. */
export function defaultDeviceOf(label: string): string | null {
  if (label === 'Default') return '';
  return label.startsWith('Default - ') ? label.slice('Default - '.length) : null;
}

/** The source a track with this label records from, judged by Chromium's record streams on it.
 * `defaultSource` is the server's default source name (AudioServerInfo.default_source_name). */
export function classifySource(
  streams: readonly AudioStream[],
  label: string,
  defaultSource: string | null,
): SourceVerdict {
  const chromium = streams.filter((s) => s.kind === 'record' && isChromiumStream(s));
  const byDescription = (d: string) => (d ? chromium.filter((s) => descriptionOf(s) === d) : []);
  let mine = byDescription(label);
  const named = defaultDeviceOf(label);
  if (mine.length === 0 && named !== null) {
    mine = byDescription(named);
    if (mine.length === 0 && defaultSource) mine = chromium.filter((s) => s.device_name === defaultSource);
  }
  const bt = mine.find((s) => busOf(s) === 'bluetooth');
  return { bluetooth: bt !== undefined, stream: bt ?? mine[0] ?? null };
}
