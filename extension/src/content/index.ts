// Isolated-world content script (content.js), every frame: the bridge between the page world's
// interposition (page.js) and the background. It validates everything the page world says (page
// scripts can forge it), forwards the frame's track states, answers release-policy questions through
// the background, and pushes the release settings for this site into the page world.
import { browserSettingsStore, releaseEnabledFor, type Settings } from '../shared/settings.ts';
import { CONTENT_EVENT, type ContentToPage, PAGE_EVENT, parsePageMessage } from './page-protocol.ts';
import type { ContentToBackground, MicPermission, ReleasePolicyAnswer } from './release-messages.ts';

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

// The frame's microphone permission, from this (isolated) world's own navigator.permissions: page
// scripts cannot patch it. Queried once; the PermissionStatus stays current.
let micStatus: Promise<PermissionStatus | null> | null = null;
function micStatusOnce(): Promise<PermissionStatus | null> {
  micStatus ??= Promise.resolve()
    .then(() => navigator.permissions.query({ name: 'microphone' as PermissionName }))
    .catch(() => null); // no Permissions API here, or no 'microphone' in it (Firefox before 131)
  return micStatus;
}
const micPermission = (): Promise<MicPermission> =>
  micStatusOnce().then((s) => (s ? (s.state as MicPermission) : 'unknown'));

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
        void micPermission().then((mic) =>
          toBackground({ type: 'release_state', url: siteUrl(), mic, groups: msg.groups }),
        );
        break;
      case 'policy_query':
        void micPermission()
          .then((mic) =>
            toBackground<ReleasePolicyAnswer>({
              type: 'release_policy',
              url: siteUrl(),
              mic,
              label: msg.label,
            }),
          )
          .then((a) =>
            toPage({ type: 'policy', query: msg.query, allow: a?.allow ?? true, reason: a?.reason ?? null }),
          );
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
          mic: s.state as MicPermission,
          groups: [],
        });
      }
    }),
  );
  void pushConfig();
}

try {
  main();
} catch {
  // An extension reload leaves orphaned content scripts without chrome.runtime: stay quiet.
}
