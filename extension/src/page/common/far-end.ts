// Far ends that watch for packets: Janus's no-media timer tells the page "not receiving your audio" a
// second after the last RTP packet, which a released microphone stops (a muted one sends silence).
// Keeping packets flowing costs most of a muted call's CPU (docs/design/release-on-mute.md "Far ends
// that watch the packets"), so micoff keeps sending where the site says so, or, where it says
// nothing, where the page uses janus.js.
import type { ReleaseConfig } from '../../shared/release-decision.ts';

/** Whether the page world holds janus.js (its global `Janus`, with `init` and `isWebrtcSupported`). */
export function usesJanus(w: object): boolean {
  try {
    const j: unknown = (w as { Janus?: unknown }).Janus;
    if (typeof j !== 'function') return false;
    const api = j as unknown as { init?: unknown; isWebrtcSupported?: unknown };
    return typeof api.init === 'function' && typeof api.isWebrtcSupported === 'function';
  } catch {
    return false;
  }
}

/** Whether a release keeps sending silence: the site's answer, else whether the page uses janus.js. */
export function keepSending(config: Pick<ReleaseConfig, 'keep_sending'>, w: object): boolean {
  return config.keep_sending ?? usesJanus(w);
}
