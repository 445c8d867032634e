// Isolated-world content script (content.js), every frame: the bridge between the page world's
// interposition (page.js) and the background, over the frame's secret channel to page.js
// (shared/messages/page-channel.ts; page scripts can neither forge nor read it). It still parses
// everything the page world says, forwards the frame's track states and its release-policy questions to
// the background with the frame's microphone permission, and forwards the background's answers and
// release settings (shared/release-decision.ts) to the page world. It decides nothing itself. The
// settings are fetched only while the frame captures (a frame that never captures never wakes the
// background) and again when they change.
import {
  type ContentToBackground,
  type MicPermission,
  micPermissionOf,
  parseConfigAnswer,
  parsePolicyAnswer,
  TICKS_PORT,
  type TickRequest,
} from '../shared/messages/content-background.ts';
import { type ChannelEnd, captureNatives, newSecret, offerChannel } from '../shared/messages/page-channel.ts';
import { type ContentToPage, parsePageMessage } from '../shared/messages/page-content.ts';
import { UNANSWERED } from '../shared/release-decision.ts';
import { browserSettingsStore } from '../shared/settings.ts';

/** The site this frame belongs to: about:blank / srcdoc frames inherit their creator's origin. */
function siteUrl(): string {
  if (/^https?:/.test(location.href)) return location.href;
  if (self.origin && self.origin !== 'null') return self.origin;
  return location.ancestorOrigins?.[0] ?? location.href;
}

// The frame's secret channel to page.js, offered now (document_start, right after page.js and before any
// page script). Null when no page world took it (Firefox, or a frame without getUserMedia): then this
// script listens to nothing from the page.
let channel: ChannelEnd | null = null;
const toPage = (m: ContentToPage) => channel?.send(JSON.stringify(m));

const toBackground = (m: ContentToBackground): Promise<unknown> =>
  chrome.runtime.sendMessage(m).catch(() => undefined);

let capturing = false;

// The frame's microphone permission, from this (isolated) world's own navigator.permissions: page
// scripts cannot patch it. Queried once; the PermissionStatus stays current. The background counts the
// frame's devices only while it is 'granted'. Asked on the frame's first report.
let micStatus: Promise<PermissionStatus | null> | null = null;
function micStatusOnce(): Promise<PermissionStatus | null> {
  if (micStatus) return micStatus;
  micStatus = Promise.resolve()
    .then(() => navigator.permissions.query({ name: 'microphone' as PermissionName }))
    .catch(() => null); // no Permissions API here, or no 'microphone' in it (Firefox before 131)
  // Revoked while capturing: the background stops counting this frame's devices.
  void micStatus.then((s) =>
    s?.addEventListener('change', () => {
      if (s.state === 'granted' || !capturing) return;
      void toBackground({ type: 'release_state', url: siteUrl(), mic: micPermissionOf(s.state), groups: [] });
    }),
  );
  return micStatus;
}
const micPermission = (): Promise<MicPermission> => micStatusOnce().then((s) => micPermissionOf(s?.state));

/** Ask the background for this site's release settings and hand them to the page world. */
async function forwardConfig(): Promise<void> {
  const config = parseConfigAnswer(await toBackground({ type: 'release_config', url: siteUrl() }));
  if (config) toPage({ type: 'config', ...config });
}

// The background's ticks, handed to the page world one by one, while it wants them (a port held open:
// background/ticks.ts), on the schedule it asks for. A service worker that went away (stopped when idle,
// the extension reloading) closes the port: asked again a second later, with the same schedule, if
// still wanted.
let ticksEveryMs = 0;
let ticksPort: chrome.runtime.Port | null = null;
function ticks(everyMs: number): void {
  ticksEveryMs = everyMs;
  if (everyMs === 0) {
    ticksPort?.disconnect();
    ticksPort = null;
    return;
  }
  if (ticksPort) {
    post({ every_ms: everyMs });
    return;
  }
  let port: chrome.runtime.Port;
  try {
    port = chrome.runtime.connect({ name: TICKS_PORT });
  } catch {
    return; // the extension is gone (reloaded): no ticks, the page's own timers only
  }
  ticksPort = port;
  port.onMessage.addListener(() => toPage({ type: 'tick' }));
  port.onDisconnect.addListener(() => {
    if (ticksPort !== port) return;
    ticksPort = null;
    setTimeout(() => {
      if (ticksEveryMs > 0 && !ticksPort) ticks(ticksEveryMs);
    }, 1000);
  });
  post({ every_ms: everyMs });
}
function post(request: TickRequest): void {
  try {
    ticksPort?.postMessage(request);
  } catch {
    // Disconnected meanwhile: its onDisconnect asks again.
  }
}

function main(): void {
  channel = offerChannel(captureNatives(window), newSecret(crypto));
  if (!channel) return;
  // A change of the settings (options page, popup) reaches every frame; the capturing ones re-ask.
  browserSettingsStore().onChange(() => {
    if (capturing) void forwardConfig();
  });

  channel.onMessage((text) => {
    const msg = parsePageMessage(text);
    if (!msg) return;
    switch (msg.type) {
      case 'hello':
        if (capturing) void forwardConfig();
        break;
      case 'state': {
        if (msg.groups.length === 0 && !capturing) return;
        const started = !capturing && msg.groups.length > 0;
        capturing = msg.groups.length > 0;
        void micPermission().then((mic) =>
          toBackground({ type: 'release_state', url: siteUrl(), mic, groups: msg.groups }),
        );
        if (started) void forwardConfig();
        break;
      }
      case 'policy_query':
        void micPermission()
          .then((mic) => toBackground({ type: 'release_policy', url: siteUrl(), mic, label: msg.label }))
          .then((raw) => {
            // No answer (background gone, extension reloading): kept open, as decided in one place.
            const a = parsePolicyAnswer(raw) ?? UNANSWERED;
            toPage({ type: 'policy', query: msg.query, ...a });
          });
        break;
      case 'ticks':
        ticks(msg.every_ms);
        break;
      case 'tick_once':
        post({ once_ms: msg.in_ms });
        break;
    }
  });
  // The frame goes away: its devices go with it.
  window.addEventListener('pagehide', () => {
    if (capturing) void toBackground({ type: 'release_state', url: siteUrl(), mic: 'unknown', groups: [] });
    capturing = false;
  });
}

try {
  main();
} catch {
  // An extension reload leaves orphaned content scripts without chrome.runtime: stay quiet.
}
