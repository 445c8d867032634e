// Isolated-world content script (content.js), every frame: the bridge between the page world's
// interposition (page.js) and the background. It parses everything the page world says (page scripts
// can forge it), forwards the frame's track states and its release-policy questions to the background,
// and forwards the background's answers and release settings (shared/release-decision.ts) to the page
// world. It decides nothing itself. The settings are fetched only while the frame captures (a frame that
// never captures never wakes the background) and again when they change.
import {
  type ContentToBackground,
  type MicPermission,
  micPermissionOf,
  parseConfigAnswer,
  parsePolicyAnswer,
} from '../shared/messages/content-background.ts';
import {
  CONTENT_EVENT,
  type ContentToPage,
  PAGE_EVENT,
  parsePageMessage,
} from '../shared/messages/page-content.ts';
import { browserSettingsStore } from '../shared/settings.ts';

/** The site this frame belongs to: about:blank / srcdoc frames inherit their creator's origin. */
function siteUrl(): string {
  if (/^https?:/.test(location.href)) return location.href;
  if (self.origin && self.origin !== 'null') return self.origin;
  return location.ancestorOrigins?.[0] ?? location.href;
}

const toPage = (m: ContentToPage) =>
  window.dispatchEvent(new CustomEvent(CONTENT_EVENT, { detail: JSON.stringify(m) }));

const toBackground = (m: ContentToBackground): Promise<unknown> =>
  chrome.runtime.sendMessage(m).catch(() => undefined);

let capturing = false;

// The frame's microphone permission, from this (isolated) world's own navigator.permissions: page
// scripts cannot patch it. Queried once; the PermissionStatus stays current. The background counts the
// frame's devices only while it is 'granted' (issue 15 item 1).
let micStatus: Promise<PermissionStatus | null> | null = null;
function micStatusOnce(): Promise<PermissionStatus | null> {
  micStatus ??= Promise.resolve()
    .then(() => navigator.permissions.query({ name: 'microphone' as PermissionName }))
    .catch(() => null); // no Permissions API here, or no 'microphone' in it (Firefox before 131)
  return micStatus;
}
const micPermission = (): Promise<MicPermission> => micStatusOnce().then((s) => micPermissionOf(s?.state));

/** Ask the background for this site's release settings and hand them to the page world. */
async function forwardConfig(): Promise<void> {
  const config = parseConfigAnswer(await toBackground({ type: 'release_config', url: siteUrl() }));
  if (config) toPage({ type: 'config', ...config });
}

function main(): void {
  // A change of the settings (options page, popup) reaches every frame; the capturing ones re-ask.
  browserSettingsStore().onChange(() => {
    if (capturing) void forwardConfig();
  });

  window.addEventListener(PAGE_EVENT, (e: Event) => {
    const msg = parsePageMessage((e as CustomEvent).detail);
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
            // No answer (background gone, extension reloading): the page world's default, allow.
            const a = parsePolicyAnswer(raw) ?? { allow: true, reason: null };
            toPage({ type: 'policy', query: msg.query, ...a });
          });
        break;
    }
  });
  // The frame goes away: its devices go with it.
  window.addEventListener('pagehide', () => {
    if (capturing) void toBackground({ type: 'release_state', url: siteUrl(), mic: 'unknown', groups: [] });
    capturing = false;
  });
  // Permission revoked while capturing: the background stops counting this frame's devices.
  void micStatusOnce().then((s) =>
    s?.addEventListener('change', () => {
      if (s.state !== 'granted' && capturing) {
        void toBackground({
          type: 'release_state',
          url: siteUrl(),
          mic: micPermissionOf(s.state),
          groups: [],
        });
      }
    }),
  );
}

try {
  main();
} catch {
  // An extension reload leaves orphaned content scripts without chrome.runtime: stay quiet.
}
