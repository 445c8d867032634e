// Isolated-world content script (content.js), every frame: the bridge between the page world's
// interposition (page.js) and the background. It validates everything the page world says (page
// scripts can forge it), forwards the frame's track states, answers release-policy questions through
// the background, and pushes the release settings for this site into the page world.
import { browserSettingsStore, releaseEnabledFor, type Settings } from '../shared/settings.ts';
import { CONTENT_EVENT, type ContentToPage, PAGE_EVENT, parsePageMessage } from './page-protocol.ts';
import type { ContentToBackground, ReleasePolicyAnswer } from './release-messages.ts';

/** The site this frame belongs to: about:blank / srcdoc frames inherit their creator's origin. */
function siteUrl(): string {
  if (/^https?:/.test(location.href)) return location.href;
  if (self.origin && self.origin !== 'null') return self.origin;
  return location.ancestorOrigins?.[0] ?? location.href;
}

const toPage = (m: ContentToPage) =>
  window.dispatchEvent(new CustomEvent(CONTENT_EVENT, { detail: JSON.stringify(m) }));

const toBackground = <T>(m: ContentToBackground): Promise<T | undefined> =>
  chrome.runtime.sendMessage<ContentToBackground, T>(m).catch(() => undefined);

let capturing = false;

function configFor(s: Settings): ContentToPage {
  const release = releaseEnabledFor(s, siteUrl());
  return {
    type: 'config',
    delay_ms: s.releaseDelayMs,
    release,
    reason: release ? null : 'release is off for this site',
  };
}

function main(): void {
  const settings = browserSettingsStore();
  const pushConfig = () =>
    settings
      .get()
      .then((s) => toPage(configFor(s)))
      .catch(() => {});
  settings.onChange((s) => toPage(configFor(s)));

  window.addEventListener(PAGE_EVENT, (e: Event) => {
    const msg = parsePageMessage((e as CustomEvent).detail);
    if (!msg) return;
    switch (msg.type) {
      case 'hello':
        void pushConfig();
        break;
      case 'state':
        if (msg.groups.length === 0 && !capturing) return;
        capturing = msg.groups.length > 0;
        void toBackground({ type: 'release_state', url: siteUrl(), groups: msg.groups });
        break;
      case 'policy_query':
        void toBackground<ReleasePolicyAnswer>({
          type: 'release_policy',
          url: siteUrl(),
          label: msg.label,
        }).then((a) =>
          toPage({ type: 'policy', query: msg.query, allow: a?.allow ?? true, reason: a?.reason ?? null }),
        );
        break;
    }
  });
  // The frame goes away: its devices go with it.
  window.addEventListener('pagehide', () => {
    if (capturing) void toBackground({ type: 'release_state', url: siteUrl(), groups: [] });
    capturing = false;
  });
  void pushConfig();
}

try {
  main();
} catch {
  // An extension reload leaves orphaned content scripts without chrome.runtime: stay quiet.
}
