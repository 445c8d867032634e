// What the background's features share. `index.ts` builds one and hands it to each feature's start
// function; a feature (e.g. release-on-mute) adds itself with one line in index.ts:
//   import { startRelease } from './release-....ts';   ...   FEATURES = [..., startRelease]
import type { SettingsStore } from '../shared/settings.ts';
import type { AudioMonitor } from './audio-monitor.ts';
import type { HostClient } from './host-client.ts';
import type { PopupHub } from './popup-hub.ts';
import type { TabViews } from './popup-tab-views.ts';

export interface BackgroundContext {
  host: HostClient;
  audio: AudioMonitor;
  settings: SettingsStore;
  /** Per-tab release state for the popup (and badge): the release code writes it. */
  tabs: TabViews;
  popups: PopupHub;
  /** Adds `globalThis.micoff[name] = value` for e2e tests (`serviceWorker.evaluate(() => micoff.x)`). */
  expose(name: string, value: unknown): void;
  log(message: string): void;
}

export type Feature = (ctx: BackgroundContext) => void;
