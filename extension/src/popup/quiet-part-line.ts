// The popup's line on micoff's own part of a muted call in Firefox (page/firefox/quiet.ts), next to the
// line on Firefox's part (native-release-line.ts): Firefox's release closes the microphone; micoff stops
// the call from encoding and sending the muted microphone's silence, QUIET_HOLD_MS after that release,
// until the unmute.
import { h } from '../shared/dom.ts';
import { QUIET_HOLD_MS } from '../shared/firefox-release.ts';
import type { TabReleaseView } from '../shared/messages/popup-background.ts';

export interface QuietPartLine {
  text: string;
  /** micoff keeps the tab's senders quiet now. */
  quiet: boolean;
}

const HOLD_S = `${Math.round(QUIET_HOLD_MS / 1000)} s`;

export function quietPartLine(view: TabReleaseView): QuietPartLine {
  if (view.muted && view.quiet_since_ms) {
    const at = new Date(view.quiet_since_ms).toLocaleTimeString();
    return {
      text: `the call has sent nothing since ${at}, where Firefox alone keeps encoding and sending the muted microphone's silence; it sends again at the unmute.`,
      quiet: true,
    };
  }
  if (view.muted) {
    return {
      text: `${HOLD_S} after Firefox's release, micoff stops the call from sending the muted microphone's silence (a call's audio senders only).`,
      quiet: false,
    };
  }
  return {
    text: `while you are muted, micoff stops the call from sending your microphone's silence, ${HOLD_S} after Firefox's release.`,
    quiet: false,
  };
}

export function quietPartNodes(view: TabReleaseView): HTMLDivElement {
  const line = quietPartLine(view);
  return h(
    'div',
    { id: 'tab-micoff-part', 'data-quiet': String(line.quiet) },
    h('b', null, "micoff's part: "),
    line.text,
  );
}
