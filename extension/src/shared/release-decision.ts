// May a muted microphone be released? Decided here, once, by the background (the only part that
// sees both the settings and the host's view of the audio server); the content script forwards the
// answer and the page world asks (the background also weighs what the page world measured of a reopen:
// shared/first-words.ts). The page world adds only what it alone can know: the delay since the device
// came on (the timing, group-machine.ts), a MediaRecorder that is recording (patch/recorder.ts) and a
// reopen slower than the page's unmute key gives (shared/first-words.ts reopenOutlastsKey); the reasons
// it shows for those are here too, so every reason has one home.
import {
  followPathsFor,
  keepSendingFor,
  releaseAllowedForSource,
  releaseEnabledFor,
  type Settings,
} from './settings.ts';

/** Why a muted device is kept open (shown in the popup and the badge title). */
export const KEPT = {
  site: 'release is off for this site',
  bluetooth: 'Bluetooth headset (releasing would switch its profile)',
  recording: 'a MediaRecorder is recording this microphone',
  /** The frame asked more often than the background answers (release-feature.ts QUERY_LIMIT). */
  throttled: 'too many release questions from this page',
  // The page listens while muted (page/chromium/graph/audibility.ts): one reason per kind of listener.
  clone:
    'the page listens while muted (another enabled copy of the microphone, e.g. a "you are talking" detector)',
  analyser: 'the page reads the microphone level while muted (a level meter or "you are talking" detector)',
  worklet: 'the page processes the microphone while muted (an audio worklet or script processor)',
  element: 'the page plays the microphone in an audio or video element',
  speakers: 'the page plays the microphone to the speakers',
  sending: 'the microphone is still sent to the call',
  unseen: 'the microphone goes through code micoff cannot follow, so it stays open to be safe',
  /** An insertable-streams processor whose frames micoff cannot follow to a generator. */
  processor:
    "the page processes the microphone's audio in its own code (e.g. noise suppression micoff cannot follow), so it stays open to be safe",
  /** The background said no without saying why (or the page's config did). */
  policy: 'kept open by policy',
  /** No answer to the release question reached the page in time (UNANSWERED). */
  unanswered: "micoff's background did not answer (kept open to be safe)",
  /** A reopen on this device without micoff-host was slow (shared/first-words.ts): releasing it would
   * cost the first words after an unmute; the popup says how to fix it (firstWordsNote). */
  firstWords:
    'a reopen of this microphone is slow without micoff-host, so it stays open to keep your first words',
  /** micoff's reopens of this device take longer than the lead the page's unmute key gives
   * (shared/first-words.ts reopenOutlastsKey): releasing it would cost the first words of an unmute. */
  slowReopen:
    'this microphone reopens slower than your unmute key gives, so it stays open to keep your first words',
  /** Reopened ahead of an unmute (page/chromium/guards/intent.ts): the user came back to the call. */
  primed:
    'reopened a moment ago because you came back to the call, so that you are heard at once when you unmute',
  /** Reopened for a moment so that a one-time permission does not expire (page/chromium/guards/grant-keeper.ts). */
  keepalive:
    "reopened for a moment so that the site's permission to use the microphone does not expire while the tab is in the background",
} as const;

/** Why micoff ended a page's microphone track (a reopen that could not be done; the page's own
 * recovery then asks for the microphone again, as after an unplugged device). */
export const ENDED = {
  permission: 'the site no longer has permission to use the microphone, so micoff could not reopen it',
  refused: 'the browser refused to reopen the microphone',
  timeout: 'the microphone did not reopen in time',
  gone: 'the microphone went away while it was being reopened',
} as const;

export type ReleaseDecision = { allow: true; reason: null } | { allow: false; reason: string };

const ALLOWED: ReleaseDecision = Object.freeze({ allow: true, reason: null });

export interface ReleaseFacts {
  settings: Settings;
  /** The frame's page (its origin picks the per-site switch). */
  url: string;
  /** Is the capture source Bluetooth (release-bluetooth.ts classifySource)? Omitted for a device the
   * frame did not report live: the site's answer alone. */
  bluetooth?: boolean;
  /** The device's slow reopen figure while micoff-host is not connected (shared/first-words.ts
   * firstWordsNeedHost); null or omitted: nothing keeps it open for the first words. */
  firstWordsMs?: number | null;
}

/** The site switch (the site's override, else the global switch). Decided here only: the background's
 * answer to each question and the standing answer the page world runs with (releaseConfig) both come
 * from it, and the page world reads that answer back with `standingDecision`, never the settings. */
export function siteDecision(settings: Settings, url: string): ReleaseDecision {
  return releaseEnabledFor(settings, url) ? ALLOWED : { allow: false, reason: KEPT.site };
}

/** A release question nobody answered (the background gone, asleep past the page world's timeout in
 * page/common/bridge.ts, or failing to look the answer up): the device stays open. Decided here only;
 * the page world's bridge, the content script and the background all answer with it. A muted device kept open is invisible to
 * the user; one released against the settings (a Bluetooth headset's profile switch) is not. */
export const UNANSWERED: ReleaseDecision = Object.freeze({ allow: false, reason: KEPT.unanswered });

export function releaseDecision(f: ReleaseFacts): ReleaseDecision {
  const site = siteDecision(f.settings, f.url);
  if (!site.allow) return site;
  if (f.bluetooth !== undefined && !releaseAllowedForSource(f.settings, f.bluetooth)) {
    return { allow: false, reason: KEPT.bluetooth };
  }
  if (f.firstWordsMs !== undefined && f.firstWordsMs !== null)
    return { allow: false, reason: KEPT.firstWords };
  return ALLOWED;
}

/** What the page world runs with for this site: the delay and the site's standing answer. */
export interface ReleaseConfig {
  delay_ms: number;
  release: boolean;
  /** Why release is off, when it is. */
  reason: string | null;
  /** Follow pipelines and senders (page/chromium/graph/audibility.ts); false: only the disabled-track rule. Absent
   * (an older sender) means true. */
  paths?: boolean;
  /** The grant keeper's interval (Settings.grantKeepaliveMs); absent means the default. */
  keepalive_ms?: number;
  /** While released, keep sending silence (Chromium: a stand-in on the senders; Firefox: no quiet
   * part): the site's answer, or null / absent for none (the page world keeps sending where it finds a
   * far end that watches for packets: page/common/far-end.ts). */
  keep_sending?: boolean | null;
}

export function releaseConfig(settings: Settings, url: string): ReleaseConfig {
  const d = siteDecision(settings, url);
  return {
    delay_ms: settings.releaseDelayMs,
    release: d.allow,
    reason: d.reason,
    paths: followPathsFor(settings, url),
    keepalive_ms: settings.grantKeepaliveMs,
    keep_sending: keepSendingFor(settings, url),
  };
}

/** The site's standing answer as the page world holds it (the config the background handed over). */
export function standingDecision(c: ReleaseConfig): ReleaseDecision {
  return c.release ? ALLOWED : { allow: false, reason: c.reason ?? KEPT.site };
}
