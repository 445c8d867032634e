// Firefox's own release of a disabled microphone, as micoff switches it on and checks it: the pref's
// name, the command that sets it from micoff's release delay, and how long after the delay the check
// waits before it calls the release not in effect (docs/design/firefox-install.md, "Is it in effect?").

/** Firefox's prefs: `<PREF>.enabled` (off by default since Firefox 84) and `<PREF>.delay_ms`. */
export const FIREFOX_RELEASE_PREF = 'media.getusermedia.microphone.off_while_disabled';

/** How long past the delay the record stream may stay at the server before the check says Firefox's
 * release is not in effect: Firefox stopping the capture, the server removing the stream and the
 * host's event (41-268 ms measured on a loaded machine, docs/design/firefox-install.md), about 8x over. */
export const NATIVE_RELEASE_MARGIN_MS = 2000;

/** The command that switches Firefox's release on in every Firefox profile of the user (user.js), with
 * Firefox's delay set to micoff's own (`Settings.releaseDelayMs`); Firefox reads it at its next start. */
export function firefoxReleaseCommand(releaseDelayMs: number): string {
  return `micoff-host install --firefox-release --release-delay-ms ${Math.round(releaseDelayMs)}`;
}

/** How long after Firefox's own release micoff takes a muted device's senders off the wire (Firefox
 * build, page/firefox/quiet.ts). Firefox gives a page no way to restart a sender's RTP stream (an audio
 * encoding's `active` is ignored, measured), so its RTP clock stands still while the sender has no
 * track, and an unmute less than 2 s into that pause makes the far end's jitter buffer take the pause for
 * network delay for ~17 s (docs/design/firefox-install.md, "micoff's part"). The hold keeps that window
 * away from the short mutes (a cough) that Firefox's own delay lets through. */
export const QUIET_HOLD_MS = 5000;
