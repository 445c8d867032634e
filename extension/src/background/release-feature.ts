// Release-on-mute, background side: takes the frames' reports (content.js) into per-tab state, keeps the
// badge and the popup's tab view current, and answers "may this device be released?" from the settings
// (per-site switch) and the host's view of the audio server (Bluetooth sources are kept open unless the
// user chose otherwise). The page world never drives anything here beyond its own tab's state.
import { isContentToBackground, type ReleasePolicyAnswer } from '../content/release-messages.ts';
import { releaseAllowedForSource, releaseEnabledFor } from '../shared/settings.ts';
import type { BackgroundContext } from './context.ts';
import { classifySource } from './release-bluetooth.ts';
import { badgeOf, TabFrames, tabViewOf } from './tab-state.ts';

export interface PolicyDeps {
  settings: BackgroundContext['settings'];
  audio: BackgroundContext['audio'];
}

export async function releasePolicy(d: PolicyDeps, url: string, label: string): Promise<ReleasePolicyAnswer> {
  const s = await d.settings.get();
  if (!releaseEnabledFor(s, url)) return { allow: false, reason: 'release is off for this site' };
  const verdict = classifySource(d.audio.snapshot().streams, label);
  if (!releaseAllowedForSource(s, verdict.bluetooth)) {
    return { allow: false, reason: 'Bluetooth headset (releasing would switch its profile)' };
  }
  return { allow: true, reason: null };
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
    if (!isContentToBackground(raw)) return false;
    const tabId = sender.tab?.id;
    if (tabId === undefined || sender.id !== chrome.runtime.id) return false;
    if (raw.type === 'release_state') {
      frames.set(tabId, sender.frameId ?? 0, { url: raw.url, groups: raw.groups.slice(0, 32) });
      refresh(tabId);
      return false;
    }
    const label = raw.label.slice(0, 200);
    // A frame may only ask about a device it reported itself: otherwise a page could probe the host's
    // view of other tabs' microphones (is any Chromium stream on a Bluetooth source?) through the
    // answer. Nothing to protect there, so the question gets the plain default.
    if (!frames.hasLive(tabId, sender.frameId ?? 0, label)) {
      reply({ allow: true, reason: null });
      return false;
    }
    void releasePolicy(ctx, raw.url, label).then(
      (answer) => {
        decisions.push({ at_ms: Date.now(), tab: tabId, label: raw.label, answer });
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
