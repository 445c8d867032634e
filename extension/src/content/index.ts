// Isolated-world content script (content.js), every frame: the bridge between the page world's
// interposition (page.js) and the background. It parses everything the page world says (page scripts
// can forge it), forwards the frame's track states and its release-policy questions to the background,
// and forwards the background's answers and release settings (shared/release-decision.ts) to the page
// world. It decides nothing itself. The settings are fetched only while the frame captures (a frame that
// never captures never wakes the background) and again when they change.
import {
  type ContentToBackground,
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
        void toBackground({ type: 'release_state', url: siteUrl(), groups: msg.groups });
        if (started) void forwardConfig();
        break;
      }
      case 'policy_query':
        void toBackground({ type: 'release_policy', url: siteUrl(), label: msg.label }).then((raw) => {
          // No answer (background gone, extension reloading): the page world's default, allow.
          const a = parsePolicyAnswer(raw) ?? { allow: true, reason: null };
          toPage({ type: 'policy', query: msg.query, ...a });
        });
        break;
    }
  });
  // The frame goes away: its devices go with it.
  window.addEventListener('pagehide', () => {
    if (capturing) void toBackground({ type: 'release_state', url: siteUrl(), groups: [] });
    capturing = false;
  });
}

try {
  main();
} catch {
  // An extension reload leaves orphaned content scripts without chrome.runtime: stay quiet.
}
