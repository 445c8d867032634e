// The popup's "This tab" section (release-on-mute): the tab's state as the page world reports
// it (capturing / released since when / kept open and why) next to what the host sees at the audio
// server (Chromium's record streams), so a user can check that "released" really means no capture.
import { h } from '../shared/dom.ts';
import type { AudioSnapshot, TabReleaseView } from '../shared/messages/popup-background.ts';
import { tabState } from './view.ts';

const isChromium = (s: AudioSnapshot['streams'][number]) =>
  s.kind === 'record' && /chrom/i.test(`${s.application_process_binary ?? ''} ${s.application_name ?? ''}`);

/** One line about the browser's record streams at the audio server. */
export function serverLine(audio: AudioSnapshot | null): string {
  if (!audio) return 'Audio server: waiting for micoff-host…';
  if (!audio.connected) return `Audio server: ${audio.reason ?? 'not reachable'}.`;
  const rec = audio.streams.filter(isChromium);
  if (rec.length === 0) return 'Audio server: no record stream from the browser (microphone closed).';
  const parts = rec.map(
    (s) => `${s.device_name ?? `source ${s.device_index}`} (${s.corked ? 'corked' : 'live'})`,
  );
  return `Audio server: ${rec.length} record stream${rec.length > 1 ? 's' : ''} open: ${parts.join(', ')}.`;
}

/** Echo cancellation on the tab's tracks as the browser granted it. */
export function echoLine(view: TabReleaseView | null): string | null {
  if (!view || view.echo_cancellation === undefined || view.echo_cancellation === null) return null;
  return `Echo cancellation: ${view.echo_cancellation ? 'on' : 'off'} for this page's microphone.`;
}

export function tabSectionNodes(view: TabReleaseView | null, audio: AudioSnapshot | null): Node[] {
  const echo = echoLine(view);
  return [
    h('div', null, tabState(view)),
    h('div', { class: 'muted', id: 'tab-server' }, serverLine(audio)),
    echo ? h('div', { id: 'tab-echo' }, echo) : null,
    view?.latency_guard ? h('div', { class: 'notice', id: 'tab-guard' }, view.latency_guard) : null,
  ].filter((n): n is HTMLDivElement => n !== null);
}

/** Keeps the latest tab view and audio snapshot and re-renders `el` when either changes. */
export function createTabSection(el: HTMLElement) {
  let view: TabReleaseView | null = null;
  let audio: AudioSnapshot | null = null;
  const render = () => el.replaceChildren(...tabSectionNodes(view, audio));
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
