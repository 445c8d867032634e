// The popup's "This tab" section (release-on-mute): the tab's state as the page world reports
// it (capturing / released since when / kept open and why) next to what the host sees at the audio
// server (the browser's record streams), so a user can check that "released" really means no capture.
// On Firefox: whether Firefox's own release is in effect, with the command that switches it on (Firefox's
// part), and what micoff does on top of it (micoff's part: the call's senders quiet while muted).

import { type BuildBrowser, isBrowserStream, microphoneNameOf } from '../shared/browser-streams.ts';
import { h } from '../shared/dom.ts';
import { firstWordsNote } from '../shared/first-words.ts';
import type { AudioSnapshot, TabReleaseView } from '../shared/messages/popup-background.ts';
import { DEFAULT_SETTINGS } from '../shared/settings.ts';
import { nativeReleaseNodes } from './native-release-line.ts';
import { quietPartNodes } from './quiet-part-line.ts';
import { streamState, tabState } from './view.ts';

/** One line about the browser's record streams at the audio server. */
export function serverLine(audio: AudioSnapshot | null, browser: BuildBrowser): string {
  if (!audio) return 'Audio server: waiting for micoff-host…';
  if (!audio.connected) return `Audio server: ${audio.reason ?? 'not reachable'}.`;
  const rec = audio.streams.filter((s) => s.kind === 'record' && isBrowserStream(s, browser));
  if (rec.length === 0) return 'Audio server: no record stream from the browser (microphone closed).';
  const parts = rec.map((s) => `${microphoneNameOf(s)} (${streamState(s)})`);
  return `Audio server: ${rec.length} record stream${rec.length > 1 ? 's' : ''} open: ${parts.join(', ')}.`;
}

const KEEPALIVE_MINUTES = Math.round(DEFAULT_SETTINGS.grantKeepaliveMs / 60_000);

/** Said when the site's permission may be a one-time one (page/chromium/guards/grant-keeper.ts): the page
 * had to ask for it in this visit. Either answer to that prompt reads "granted" to micoff until a
 * one-time grant runs out, so the note holds for both. */
export const ONE_TIME_GRANT_NOTE =
  'This site asked for your microphone during this visit. If you chose "Allow this time", Chromium takes ' +
  'that permission back after a few minutes in the background with the microphone closed, so while the ' +
  `muted call is in a background tab micoff turns the microphone on for a moment every ${KEEPALIVE_MINUTES} ` +
  'minutes (the microphone indicator lights up briefly). micoff cannot tell that answer from "Allow ' +
  'while visiting the site", which needs none of this; with that one, it stops at the site\'s next visit. ' +
  'To switch to it now: the icon left of the address, then Site settings.';

/** Echo cancellation on the tab's tracks as the browser granted it. */
export function echoLine(view: TabReleaseView | null): string | null {
  if (!view || view.echo_cancellation === undefined || view.echo_cancellation === null) return null;
  return `Echo cancellation: ${view.echo_cancellation ? 'on' : 'off'} for this page's microphone.`;
}

export function tabSectionNodes(
  view: TabReleaseView | null,
  audio: AudioSnapshot | null,
  browser: BuildBrowser,
): Node[] {
  const echo = echoLine(view);
  return [
    h('div', null, tabState(view)),
    h('div', { class: 'muted', id: 'tab-server' }, serverLine(audio, browser)),
    view?.native_release ? nativeReleaseNodes(view.native_release, audio?.connected !== false) : null,
    view?.native_release ? quietPartNodes(view) : null,
    echo ? h('div', { id: 'tab-echo' }, echo) : null,
    view?.latency_guard ? h('div', { class: 'notice', id: 'tab-guard' }, view.latency_guard) : null,
    view?.grant_may_expire ? h('div', { class: 'notice', id: 'tab-grant' }, ONE_TIME_GRANT_NOTE) : null,
    view?.first_words_need_host_ms
      ? h('div', { class: 'notice', id: 'tab-first-words' }, firstWordsNote(view.first_words_need_host_ms))
      : null,
  ].filter((n): n is HTMLDivElement => n !== null);
}

/** Keeps the latest tab view and audio snapshot and re-renders `el` when either changes. */
export function createTabSection(el: HTMLElement) {
  let view: TabReleaseView | null = null;
  let audio: AudioSnapshot | null = null;
  const render = () => el.replaceChildren(...tabSectionNodes(view, audio, __BROWSER__));
  return {
    tab(v: TabReleaseView | null) {
      view = v;
      render();
    },
    audio(a: AudioSnapshot) {
      audio = a;
      render();
    },
  };
}
