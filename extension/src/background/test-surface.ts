// `globalThis.micoff`: what e2e tests drive through `serviceWorker.evaluate(() => micoff...)`.
// Everything returned is plain data (structured-clonable), so `evaluate` can hand it back.
import type { SettingsStore } from '../shared/settings.ts';
import type { AudioMonitor } from './audio-monitor.ts';
import type { CallPhase } from './call-phase.ts';
import type { HostClient } from './host-client.ts';
import type { PopupHub } from './popup-hub.ts';
import type { TabViews } from './popup-tab-views.ts';
import type { SavedCpu } from './saved-cpu.ts';

export interface TestSurfaceParts {
  host: HostClient;
  audio: AudioMonitor;
  settings: SettingsStore;
  tabs: TabViews;
  popups: PopupHub;
  phase: CallPhase;
  saved: SavedCpu;
}

export type MicoffGlobal = ReturnType<typeof buildTestSurface> & Record<string, unknown>;

export function buildTestSurface(p: TestSurfaceParts) {
  return {
    browser: __BROWSER__,
    host: {
      request: p.host.request,
      status: p.host.status,
      reconnect: p.host.reconnect,
      traffic: p.host.traffic,
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
      historySubscription: p.popups.historySubscription,
      history: p.popups.history,
    },
    /** The call's phase as the host was told it, and the CPU-s saved since the browser started. */
    call: {
      phase: p.phase.current,
      savedCpuS: p.saved.total,
    },
  };
}

export function installTestSurface(parts: TestSurfaceParts): MicoffGlobal {
  const micoff = buildTestSurface(parts) as MicoffGlobal;
  (globalThis as unknown as { micoff: MicoffGlobal }).micoff = micoff;
  return micoff;
}
