// The popup's capture-latency lines for the current tab: the latency the audio server
// actually grants the browser's capture (from the host's `latency_status`), and the measured CPU of the
// audio path. The tab's record streams are told apart by their source (the tracks' labels the page
// world reports, matched like release-bluetooth.ts does); without labels, every browser stream counts.
import { grantedLine, grantedView } from '../shared/capture-latency.ts';
import { fmtPct } from '../shared/dom.ts';
import type { AudioSnapshot } from '../shared/messages/popup-background.ts';
import type { LatencyReply } from '../shared/messages/ui-latency.ts';

/** Record streams (indices) of the browser whose source matches one of the tab's track labels. */
export function tabStreamIndices(audio: AudioSnapshot | null, labels: readonly string[]): number[] {
  if (!audio || labels.length === 0) return [];
  return audio.streams
    .filter((s) => s.kind === 'record')
    .filter((s) => {
      const description = s.device_description ?? s.device_props?.['device.description'] ?? null;
      return description !== null && labels.includes(description);
    })
    .map((s) => s.index);
}

/** The tab's line while its microphone is closed: the server grants no latency to a capture that is
 * not there (the host's view of other captures is not this tab's). */
export const CLOSED_LATENCY_LINE = 'Capture latency: no capture while the microphone is closed.';

export function latencyLine(reply: LatencyReply | null, indices: readonly number[]): string {
  if (!reply) return 'Capture latency: asking micoff-host…';
  if (!reply.status) return `Capture latency: not available (${reply.error ?? 'micoff-host not reachable'}).`;
  const line = grantedLine(grantedView(reply.status, indices));
  const c = reply.status.configured;
  if (!c) return line;
  const managed = reply.managed.managed ? ', set by your administrator' : '';
  const restart = reply.status.needs_restart;
  const pending = restart.length
    ? ` Not in effect yet: restart ${restart.join(' and ')}.`
    : c.in_effect === false
      ? ' Not in effect.'
      : '';
  return `${line} Configured: ${c.capture_ms} ms${managed}.${pending}`;
}

export function audioPathLine(cpuPct: number | null): string {
  return cpuPct === null
    ? 'Audio path CPU: waiting for micoff-host…'
    : `Audio path CPU: ${fmtPct(cpuPct)} % of one core (audio server, audio service, audio threads).`;
}
