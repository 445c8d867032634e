// Release-on-mute, background side: takes the frames' reports (content.js) into per-tab state, keeps the
// badge and the popup's tab view current, and makes the release decision (shared/release-decision.ts)
// from the settings (per-site switch) and the host's view of the audio server (Bluetooth sources are
// kept open unless the user chose otherwise): both the site's standing config the page world runs with
// and the answer to each "may this device be released now?". The page world never drives anything here
// beyond its own tab's state.
import { parseContentToBackground, type ReleasePolicyAnswer } from '../shared/messages/content-background.ts';
import { releaseConfig, releaseDecision } from '../shared/release-decision.ts';
import type { BackgroundContext } from './context.ts';
import { classifySource } from './release-bluetooth.ts';
import { badgeOf, TabFrames, tabViewOf } from './tab-state.ts';

export interface PolicyDeps {
  settings: BackgroundContext['settings'];
  audio: BackgroundContext['audio'];
}

export async function releasePolicy(d: PolicyDeps, url: string, label: string): Promise<ReleasePolicyAnswer> {
  const settings = await d.settings.get();
  const { bluetooth } = classifySource(d.audio.snapshot().streams, label);
  return releaseDecision({ settings, url, bluetooth });
}

export function startRelease(ctx: BackgroundContext): void {
  const frames = new TabFrames();
  const decisions: { at_ms: number; tab: number; label: string; answer: ReleasePolicyAnswer }[] = [];

  const refresh = (tabId: number) => {
    const view = tabViewOf(frames.frames(tabId), frames.topUrl(tabId));
    ctx.tabs.set(tabId, view);
    const b = badgeOf(view);
    chrome.action?.setBadgeText({ tabId, text: b.text }).catch(() => {});
    chrome.action?.setBadgeBackgroundColor({ tabId, color: b.color }).catch(() => {});
    chrome.action?.setTitle({ tabId, title: b.title }).catch(() => {});
  };

  chrome.runtime.onMessage.addListener((raw: unknown, sender, reply) => {
    const msg = parseContentToBackground(raw);
    if (!msg) return false;
    const tabId = sender.tab?.id;
    if (tabId === undefined || sender.id !== chrome.runtime.id) return false;
    if (msg.type === 'release_state') {
      frames.set(tabId, sender.frameId ?? 0, { url: msg.url, groups: msg.groups });
      refresh(tabId);
      return false;
    }
    if (msg.type === 'release_config') {
      ctx.settings.get().then(
        (s) => reply(releaseConfig(s, msg.url)),
        () => reply(undefined),
      );
      return true; // async reply
    }
    const label = msg.label;
    // A frame may only ask about a device it reported itself: otherwise a page could probe the host's
    // view of other tabs' microphones (is any Chromium stream on a Bluetooth source?) through the
    // answer. Nothing to protect there, so the question gets the plain default.
    if (!frames.hasLive(tabId, sender.frameId ?? 0, label)) {
      reply({ allow: true, reason: null });
      return false;
    }
    void releasePolicy(ctx, msg.url, label).then(
      (answer) => {
        decisions.push({ at_ms: Date.now(), tab: tabId, label, answer });
        if (decisions.length > 50) decisions.shift();
        reply(answer);
      },
      () => reply({ allow: true, reason: null }),
    );
    return true; // async reply
  });

  chrome.tabs?.onRemoved.addListener((tabId) => {
    frames.clear(tabId);
    ctx.tabs.set(tabId, null);
  });
  chrome.tabs?.onUpdated.addListener((tabId, change) => {
    // A navigation of the top frame drops every frame's devices (the new document reports afresh).
    if (change.status === 'loading' && change.url) {
      frames.clear(tabId);
      refresh(tabId);
    }
  });

  ctx.expose('release', {
    frames: () => frames.all(),
    tab: (tabId: number) => ctx.tabs.get(tabId),
    decisions: () => [...decisions],
    policy: (url: string, label: string) => releasePolicy(ctx, url, label),
  });
}
