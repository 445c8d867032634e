// Popup entry: one port to the background (its lifetime = the popup is open), rendering in view.ts.
// `popup.html?tab=<id>` pins the tab (tests open the popup as a normal page).

import {
  type AudioSnapshot,
  type BackgroundToPopup,
  POPUP_PORT,
  type PopupToBackground,
} from '../shared/messages/popup-background.ts';
import type { LatencyReply, LatencyRequest } from '../shared/messages/ui-latency.ts';
import { micClosed, micStateOf } from '../shared/mic-state.ts';
import {
  browserSettingsStore,
  followPathsFor,
  followPathsSitePatch,
  keepSendingFor,
  keepSendingSitePatch,
  normalizeOrigin,
  releaseEnabledFor,
} from '../shared/settings.ts';
import { chartSvg, type PowerState, savingsLines } from './chart.ts';
import { audioPathLine, CLOSED_LATENCY_LINE, latencyLine, tabStreamIndices } from './latency-section.ts';
import { createTabSection } from './tab-section.ts';
import {
  cpuTable,
  doctorList,
  hostNotice,
  hostPill,
  hostRestarted,
  needsHost,
  needsHostLine,
  streamsTable,
} from './view.ts';

const $ = (id: string) => document.getElementById(id) as HTMLElement;
const settings = browserSettingsStore();
const port = chrome.runtime.connect({ name: POPUP_PORT });
const post = (m: PopupToBackground) => port.postMessage(m);
const tabSection = createTabSection($('tab-state'));

port.onMessage.addListener((raw: unknown) => {
  const msg = raw as BackgroundToPopup;
  switch (msg.type) {
    case 'host_status': {
      const pill = hostPill(msg.status);
      $('host-pill').textContent = pill.text;
      $('host-pill').className = pill.cls;
      $('host').replaceChildren(
        ...hostNotice(msg.status, () => post({ type: 'host_reconnect' })),
        ...hostRestarted(msg.status),
      );
      if (msg.status.state !== 'connected') {
        $('cpu-body').replaceChildren(needsHostLine(msg.status));
        $('tab-cpu').textContent = `Audio path CPU: ${needsHost(msg.status)}`;
        if (!$('chart').querySelector('svg')) $('chart').replaceChildren(needsHostLine(msg.status));
      }
      break;
    }
    case 'cpu':
      $('cpu-body').replaceChildren(...cpuTable(msg.view));
      $('tab-cpu').textContent = audioPathLine(msg.view.audio_path_cpu_pct);
      break;
    case 'cpu_error':
      $('cpu-body').replaceChildren(msg.message);
      break;
    case 'audio':
      $('streams-body').replaceChildren(...streamsTable(msg.audio));
      tabSection.audio(msg.audio);
      latest.audio = msg.audio;
      renderLatency();
      break;
    case 'tab':
      tabSection.tab(msg.tab);
      latest.labels = msg.tab?.labels ?? [];
      latest.closed = msg.tab ? micClosed(micStateOf(msg.tab)) : false;
      renderLatency();
      if (msg.tab?.origin && !siteOrigin) void showSite(msg.tab.origin);
      break;
    case 'doctor':
      $('doctor-body').replaceChildren(...doctorList(msg.result));
      break;
    case 'history':
      saved = msg.history.saved_cpu_s;
      $('chart').replaceChildren(chartSvg(msg.history));
      renderSavings();
      break;
    case 'power':
      power = msg.result;
      renderSavings();
      break;
  }
});

$('doctor-run').addEventListener('click', () => {
  $('doctor-body').replaceChildren('Running…');
  post({ type: 'run_doctor' });
});

let siteOrigin: string | null = null;

// ---- chart and savings -------------------------------------------------------------------
let saved = 0;
let power: PowerState = null;
function renderSavings(): void {
  const lines = savingsLines(saved, power);
  $('saved-cpu').textContent = lines.cpu;
  $('saved-energy').textContent = lines.energy;
  if (lines.energy_detail) $('saved-energy').title = `micoff-host: ${lines.energy_detail}`;
  else $('saved-energy').removeAttribute('title');
}
post({ type: 'get_power' }); // measured once per opening (the host reads for one second)

// ---- capture latency ----------------------------------------------------------------------
const latest: {
  audio: AudioSnapshot | null;
  latency: LatencyReply | null;
  labels: string[];
  closed: boolean;
} = {
  audio: null,
  latency: null,
  labels: [],
  closed: false,
};
function renderLatency(): void {
  $('tab-latency').textContent = latest.closed
    ? CLOSED_LATENCY_LINE
    : latencyLine(latest.latency, tabStreamIndices(latest.audio, latest.labels));
}
/** The host's view of the grant changes when streams come and go: asked again every 2 s while open. */
async function pollLatency(): Promise<void> {
  latest.latency = await chrome.runtime
    .sendMessage<LatencyRequest, LatencyReply>({ type: 'micoff_latency_get' })
    .catch(() => null);
  renderLatency();
  setTimeout(() => void pollLatency(), 2000);
}
void pollLatency();

async function showSite(url: string): Promise<void> {
  const origin = normalizeOrigin(url);
  if (!origin || !/^https?:/.test(url)) return;
  siteOrigin = origin;
  const s = await settings.get();
  // Both browsers: Chromium's stand-ins, Firefox's quiet part (docs/design/release-on-mute.md "Far
  // ends that watch the packets").
  const sending = keepSendingFor(s, origin);
  ($('site-sending') as HTMLSelectElement).value = sending === null ? 'auto' : sending ? 'on' : 'off';
  $('site-sending-row').hidden = false;
  // micoff releases on Chromium only (Firefox's own pref does on Firefox): no release switches there.
  if (__BROWSER__ === 'firefox') return;
  const box = $('site-release') as HTMLInputElement;
  $('site-origin').textContent = new URL(origin).host;
  box.checked = releaseEnabledFor(s, origin);
  ($('site-paths') as HTMLInputElement).checked = followPathsFor(s, origin);
  $('site-row').hidden = false;
  $('site-paths-row').hidden = false;
}

($('site-paths') as HTMLInputElement).addEventListener('change', async (e) => {
  if (!siteOrigin) return;
  const on = (e.target as HTMLInputElement).checked;
  const s = await settings.get();
  // Back to the global setting: no exception needed.
  const patch = followPathsSitePatch(s, siteOrigin, on === s.followPaths ? null : on);
  if (patch) await settings.update(patch);
});

($('site-sending') as HTMLSelectElement).addEventListener('change', async (e) => {
  if (!siteOrigin) return;
  const v = (e.target as HTMLSelectElement).value;
  const patch = keepSendingSitePatch(await settings.get(), siteOrigin, v === 'auto' ? null : v === 'on');
  if (patch) await settings.update(patch);
});

($('site-release') as HTMLInputElement).addEventListener('change', (e) => {
  if (!siteOrigin) return;
  void settings.setSiteOverride(siteOrigin, { release: (e.target as HTMLInputElement).checked });
});

async function init(): Promise<void> {
  const pinned = Number(new URLSearchParams(location.search).get('tab'));
  let tabId: number | null = Number.isInteger(pinned) && pinned > 0 ? pinned : null;
  let url: string | undefined;
  if (tabId === null) {
    const [tab] = await chrome.tabs.query({ active: true, currentWindow: true });
    tabId = tab?.id ?? null;
    url = tab?.url; // present with activeTab (the user opened the popup on this tab)
  } else {
    url = (await chrome.tabs.get(tabId).catch(() => undefined))?.url;
  }
  post({ type: 'popup_hello', tab_id: tabId });
  if (url) await showSite(url);
}

void init();
