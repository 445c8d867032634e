// A tab's microphone as the user meets it: on, muted but still open, released (by micoff in Chromium, by
// Firefox's own release in Firefox) or kept open, read from the tab view (background/tab-state.ts) and,
// on Firefox, micoff's check of Firefox's release at the audio server (background/native-release.ts).
// One rule for the toolbar badge, the popup's first line and the call phase the host's chart shades.
import type { TabReleaseView } from './messages/popup-background.ts';

export type MicState = 'on' | 'muted_open' | 'released' | 'released_by_firefox' | 'kept';

export function micStateOf(view: TabReleaseView): MicState {
  switch (view.state) {
    case 'released':
      return 'released';
    case 'not_released':
      return 'kept';
    case 'capturing':
      if (!view.muted) return 'on';
      return view.native_release?.now.state === 'in_effect' ? 'released_by_firefox' : 'muted_open';
  }
}

export interface Badge {
  text: string;
  color: string;
  title: string;
}

/** The toolbar badge names the microphone, never micoff: "MIC" while the tab holds it open (red unmuted,
 * amber muted), "MIC!" when micoff keeps a muted one open, none once it is closed; the title says it in
 * words. */
export const MIC_BADGE = {
  none: { text: '', color: '#475569', title: 'micoff: no microphone in use on this tab' },
  on: { text: 'MIC', color: '#dc2626', title: "micoff: this tab's microphone is on" },
  muted_open: {
    text: 'MIC',
    color: '#d97706',
    title: "micoff: muted, this tab's microphone is still open",
  },
  kept: { text: 'MIC!', color: '#d97706', title: "micoff: muted, this tab's microphone is kept open" },
  released: {
    text: '',
    color: '#16a34a',
    title: "micoff: muted, this tab's microphone is released (closed) until you unmute",
  },
  released_by_firefox: {
    text: '',
    color: '#16a34a',
    title: "micoff: muted, Firefox released this tab's microphone (closed) until you unmute",
  },
} as const satisfies Record<MicState | 'none', Badge>;

export function badgeOf(view: TabReleaseView | null): Badge {
  if (!view) return MIC_BADGE.none;
  const state = micStateOf(view);
  const b = MIC_BADGE[state];
  return state === 'kept' && view.reason ? { ...b, title: `${b.title} (${view.reason})` } : b;
}

/** Is the tab's microphone closed (released by micoff or by Firefox)? */
export function micClosed(state: MicState): boolean {
  return state === 'released' || state === 'released_by_firefox';
}
