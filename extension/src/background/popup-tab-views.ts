// Per-tab release state as the popup shows it. The release-on-mute code (issue 4) is the only writer:
// it calls `set(tabId, view)` whenever a tab's state changes (null when nothing captures any more);
// the popup hub listens and pushes the change to an open popup.
import type { TabReleaseView } from '../shared/messages/popup-background.ts';

export interface TabViews {
  get(tabId: number): TabReleaseView | null;
  set(tabId: number, view: TabReleaseView | null): void;
  all(): Map<number, TabReleaseView>;
  onChange(listener: (tabId: number, view: TabReleaseView | null) => void): () => void;
}

export function createTabViews(): TabViews {
  const views = new Map<number, TabReleaseView>();
  const listeners = new Set<(tabId: number, view: TabReleaseView | null) => void>();
  return {
    get: (tabId) => views.get(tabId) ?? null,
    set(tabId, view) {
      if (view) views.set(tabId, view);
      else views.delete(tabId);
      for (const l of listeners) l(tabId, view);
    },
    all: () => new Map(views),
    onChange(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
  };
}
