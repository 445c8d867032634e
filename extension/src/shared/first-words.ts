// First words without micoff-host: how long a freshly opened microphone took to deliver its first audio
// (measured in the page world, page/chromium/guards/first-audio.ts), learned per site and device by the
// background (background/first-audio-store.ts), and the rule that keeps a muted device open when a
// reopen there would lose the user's first words and only the host's sink waker could prevent it
// (docs/design/release-on-mute.md "First words without the host").

/** An open that then waited longer than this for its first audio is slow: well above what a device
 * that keeps up waits (PipeWire, PulseAudio with the host), well below an idle null sink's wait. Argued
 * in docs/design/release-on-mute.md#first-words-without-the-host. */
export const FIRST_AUDIO_SLOW_MS = 300;

/** How long the page world waits for a fresh capture's first audio before it reports the wait itself:
 * past an idle PulseAudio null sink's 2 s block. */
export const FIRST_AUDIO_WINDOW_MS = 2500;

/** One measurement: ms from the open's start to the first audio (when none came, the wait until the
 * window ran out or the release cut it short: a lower bound), of which `open_ms` until the browser
 * handed the track over (0 when timed from there: the page's own getUserMedia), and when it was made
 * (Date.now()). */
export interface FirstAudio {
  ms: number;
  open_ms: number;
  at_ms: number;
}

/** What the host's sink waker could shorten: the wait for audio once the device is open. */
export const waitAfterOpen = (s: FirstAudio): number => Math.max(0, s.ms - s.open_ms);

/** What is known of one device on one site: the latest measurement made while micoff-host was not
 * connected (the case the rule is about) and the latest made while it was (reported, never a reason to
 * keep the device open: the host's sink waker undoes the delay). */
export interface FirstAudioEntry {
  no_host: FirstAudio | null;
  host: FirstAudio | null;
}

export const EMPTY_ENTRY: FirstAudioEntry = Object.freeze({ no_host: null, host: null });

/** The entry after a new measurement; measurements not newer than the one held change nothing (reports
 * repeat the group's latest measurement). */
export function learnFirstAudio(
  entry: FirstAudioEntry,
  sample: FirstAudio,
  hostConnected: boolean,
): FirstAudioEntry {
  const slot = hostConnected ? 'host' : 'no_host';
  const held = entry[slot];
  if (held && held.at_ms >= sample.at_ms) return entry;
  return { ...entry, [slot]: { ms: sample.ms, open_ms: sample.open_ms, at_ms: sample.at_ms } };
}

/** The rule: while micoff-host is not connected, a device whose latest open without it waited for its
 * first audio longer than FIRST_AUDIO_SLOW_MS once open is not released; returns that open's figure
 * (ms, from its start), else null (release as usual). The open itself (getUserMedia's own time) does
 * not count: the host does not shorten it. With the host connected the device is released (its waker
 * wakes the sink) and measurements go on. */
export function firstWordsNeedHost(entry: FirstAudioEntry | null, hostConnected: boolean): number | null {
  const s = hostConnected ? null : entry?.no_host;
  return s && waitAfterOpen(s) > FIRST_AUDIO_SLOW_MS ? s.ms : null;
}

/** The lead an unmute key gives: its first modifier goes down at least this long before the key (the
 * shortest a person gives), and micoff reopens on that modifier (page/chromium/guards/intent.ts). */
export const KEY_LEAD_MS = 100;

/** A micoff reopen whose device then waited longer than this for its first audio, once the browser
 * had opened it, outlasts the key's lead: with the open itself (tens of ms) the first audio comes at
 * or after the unmute. The wait is the device's (the audio server's graph taking a new recorder); the
 * open's own time swings with the machine's load and the circumstance of the reopen (a tab coming to
 * the front), so it does not count. Between the waits of devices that keep up (PulseAudio 0-23 ms,
 * PipeWire's pipe source 22-31) and PipeWire's monitor behind a large-latency player (33-103, mostly
 * above 50); argued in docs/design/release-on-mute.md "Reopen on a PipeWire monitor source". */
export const SLOW_REOPEN_WAIT_MS = 50;

/** How many of micoff's reopens of a device in a row must have waited longer than the mark before it
 * is kept open: one alone can (PulseAudio's monitor read 51 ms once, on an idle machine). */
export const SLOW_REOPENS_IN_A_ROW = 2;

/** The run of slow reopens after a new measurement: one more when micoff's reopen (`open_ms` > 0)
 * waited longer than SLOW_REOPEN_WAIT_MS once open, none when it did not; the page's own getUserMedia
 * (`open_ms` 0) says nothing about a reopen and leaves it. */
export function slowReopenStreak(streak: number, s: FirstAudio): number {
  if (s.open_ms <= 0) return streak;
  return waitAfterOpen(s) > SLOW_REOPEN_WAIT_MS ? streak + 1 : 0;
}

/** The page world's rule: on a page where the user unmutes by a key, a device whose last
 * SLOW_REOPENS_IN_A_ROW reopens by micoff each waited longer than SLOW_REOPEN_WAIT_MS for their first
 * audio once open is kept open while muted; returns the latest reopen's figure (from its start), else
 * null. The host cannot help here (it is the audio server's graph that is slow to take a new
 * recorder), so it holds with or without it. */
export function reopenOutlastsKey(
  streak: number,
  latest: FirstAudio | null,
  unmutesByKey: boolean,
): number | null {
  return unmutesByKey && latest && streak >= SLOW_REOPENS_IN_A_ROW ? latest.ms : null;
}

/** What the popup says about such a device (its one wording). */
export function firstWordsNote(ms: number): string {
  return (
    `First words on this microphone need micoff-host: its reopen took ${Math.round(ms)} ms. ` +
    'Install micoff-host (see README) and micoff releases it again.'
  );
}

/** A measurement as the page world reports it, or null when it is not one (a page can forge it: the
 * worst it can do is keep its own site's microphone open). */
export function parseFirstAudio(v: unknown): FirstAudio | null {
  if (typeof v !== 'object' || v === null) return null;
  const { ms, open_ms, at_ms } = v as Record<string, unknown>;
  const time = (x: unknown, max: number): x is number =>
    typeof x === 'number' && Number.isFinite(x) && x >= 0 && x <= max;
  if (!time(ms, 60_000) || !time(open_ms, ms) || !time(at_ms, Number.MAX_SAFE_INTEGER)) return null;
  return { ms, open_ms, at_ms };
}
