// `globalThis.micoff`: what e2e tests drive through `serviceWorker.evaluate(() => micoff...)`.
// Everything returned is plain data (structured-clonable), so `evaluate` can hand it back.
import type { SettingsStore } from '../shared/settings.ts';
import type { AudioMonitor } from './audio-monitor.ts';
import type { HostClient } from './host-client.ts';
import type { PopupHub } from './popup-hub.ts';
import type { TabViews } from './popup-tab-views.ts';

export interface TestSurfaceParts {
  host: HostClient;
  audio: AudioMonitor;
  settings: SettingsStore;
  tabs: TabViews;
  popups: PopupHub;
}

export type MicoffGlobal = ReturnType<typeof buildTestSurface> & Record<string, unknown>;

export function buildTestSurface(p: TestSurfaceParts) {
  return {
    browser: __BROWSER__,
    host: {
      request: p.host.request,
      status: p.host.status,
      reconnect: p.host.reconnect,
    },
    audio: {
      snapshot: p.audio.snapshot,
      recordStreams: () => p.audio.snapshot().streams.filter((s) => s.kind === 'record'),
    },
    settings: {
      get: p.settings.get,
      update: p.settings.update,
      setSiteOverride: p.settings.setSiteOverride,
    },
    tabs: {
      get: p.tabs.get,
      all: () => Object.fromEntries(p.tabs.all()),
    },
    popups: {
      count: p.popups.count,
      cpuSubscription: p.popups.cpuSubscription,
      history: () => p.popups.history.snapshot(),
    },
  };
}

export function installTestSurface(parts: TestSurfaceParts): MicoffGlobal {
  const micoff = buildTestSurface(parts) as MicoffGlobal;
  (globalThis as unknown as { micoff: MicoffGlobal }).micoff = micoff;
  return micoff;
}
