// Which of the audio server's streams are this browser's: the build's browser family, told by the
// client's process binary and application name as the audio server reports them (Chromium and its
// rebuilds: "chromium", "chrome"; Firefox and its ESR: "firefox", "firefox-esr").
import type { AudioStream } from './protocol.ts';

/** The browser an extension build is for (`__BROWSER__`). */
export type BuildBrowser = 'chrome' | 'firefox';

const FAMILY: Record<BuildBrowser, RegExp> = { chrome: /chrom/i, firefox: /firefox/i };

/** Is this stream (record or playback) from a browser of the build's family? */
export function isBrowserStream(
  s: Pick<AudioStream, 'application_process_binary' | 'application_name'>,
  browser: BuildBrowser,
): boolean {
  return FAMILY[browser].test(`${s.application_process_binary ?? ''} ${s.application_name ?? ''}`);
}

/** The stream's source description (what the browser labels a track with). */
export function sourceDescriptionOf(
  s: Pick<AudioStream, 'device_description' | 'device_props'>,
): string | null {
  return s.device_description ?? s.device_props?.['device.description'] ?? null;
}

/** A stream's microphone as a person knows it: its description, else the server's name for it. */
export function microphoneNameOf(
  s: Pick<AudioStream, 'device_description' | 'device_props' | 'device_name'>,
): string {
  return sourceDescriptionOf(s) ?? s.device_name ?? 'an unnamed microphone';
}

/** A stream's program: the name it gave the server, else its binary. */
export function programNameOf(
  s: Pick<AudioStream, 'application_name' | 'application_process_binary'>,
): string {
  return s.application_name ?? s.application_process_binary ?? UNNAMED_PROGRAM;
}

/** Said for a client that gave the audio server no name. */
export const UNNAMED_PROGRAM = 'a program without a name';
