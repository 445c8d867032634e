// May a muted microphone be released? Decided here, once, by the background (the only part that
// sees both the settings and the host's view of the audio server); the content script forwards the
// answer and the page world asks. The page world adds only what it alone can know: the delay since
// the device came on (the timing, group-machine.ts) and a MediaRecorder that is recording
// (patch/recorder.ts); the reasons it shows for those are here too, so every reason has one home.
import { followPathsFor, releaseAllowedForSource, releaseEnabledFor, type Settings } from './settings.ts';

/** Why a muted device is kept open (shown in the popup and the badge title). */
export const KEPT = {
  site: 'release is off for this site',
  bluetooth: 'Bluetooth headset (releasing would switch its profile)',
  recording: 'a MediaRecorder is recording this microphone',
  /** The frame asked more often than the background answers (release-feature.ts QUERY_LIMIT). */
  throttled: 'too many release questions from this page',
  // The page listens while muted (page/audibility.ts): one reason per kind of listener.
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
  /** Neither the site's settings nor an answer reached the page in time (page/bridge.ts). */
  unanswered: "micoff's background did not answer (kept open to be safe)",
  /** Reopened ahead of an unmute (page/intent.ts): the user came back to the call. */
  primed:
    'reopened a moment ago because you came back to the call, so that you are heard at once when you unmute',
  /** Reopened for a moment so that a one-time permission does not expire (page/grant-keeper.ts). */
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

export interface ReleaseFacts {
  settings: Settings;
  /** The frame's page (its origin picks the per-site switch). */
  url: string;
  /** Is the capture source Bluetooth (release-bluetooth.ts classifySource)? Omitted for the site's
   * standing answer, which the page world gets ahead of any release as its config. */
  bluetooth?: boolean;
}

export function releaseDecision(f: ReleaseFacts): ReleaseDecision {
  if (!releaseEnabledFor(f.settings, f.url)) return { allow: false, reason: KEPT.site };
  if (f.bluetooth !== undefined && !releaseAllowedForSource(f.settings, f.bluetooth)) {
    return { allow: false, reason: KEPT.bluetooth };
  }
  return { allow: true, reason: null };
}

/** What the page world runs with for this site: the delay and the site's standing answer. */
export interface ReleaseConfig {
  delay_ms: number;
  release: boolean;
  /** Why release is off, when it is. */
  reason: string | null;
  /** Follow pipelines and senders (page/audibility.ts); false: only the disabled-track rule. Absent
   * (an older sender) means true. */
  paths?: boolean;
}

export function releaseConfig(settings: Settings, url: string): ReleaseConfig {
  const d = releaseDecision({ settings, url });
  return {
    delay_ms: settings.releaseDelayMs,
    release: d.allow,
    reason: d.reason,
    paths: followPathsFor(settings, url),
  };
}
