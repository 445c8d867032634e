// Background entry (Chrome service worker / Firefox background script): builds the collaborators,
// registers listeners and starts each feature. No logic here.
import { POPUP_PORT } from '../shared/messages/popup-background.ts';
import { browserSettingsStore } from '../shared/settings.ts';
import { createAudioMonitor } from './audio-monitor.ts';
import { startCallPhase } from './call-phase.ts';
import type { BackgroundContext, Feature } from './context.ts';
import { browserHostClient } from './host-client.ts';
import { startLatency } from './latency-feature.ts';
import { type ConnectingPortLike, createPopupHub } from './popup-hub.ts';
import { createTabViews } from './popup-tab-views.ts';
import { startRelease } from './release-feature.ts';
import { createSavedCpu } from './saved-cpu.ts';
import { browserSavingsStore } from './savings-store.ts';
import { installTestSurface } from './test-surface.ts';
import { acceptTicks } from './ticks.ts';
import { ownExtension } from './ui-sender.ts';

/** Features started with the shared context: each adds its start function here. */
const FEATURES: Feature[] = [startRelease, startLatency];

const log = (m: string) => console.debug(`[micoff] ${m}`);
const host = browserHostClient(log);
const audio = createAudioMonitor(host);
const settings = browserSettingsStore();
const tabs = createTabViews();
const saved = createSavedCpu(browserSavingsStore());
const phase = startCallPhase({ host, tabs, saved, log });
const popups = createPopupHub({ host, audio, tabs, saved });

const own = ownExtension();

// Listeners are registered synchronously at top level, so a waking service worker gets the event.
chrome.runtime.onConnect.addListener((port) => {
  if (acceptTicks(port)) return;
  if (port.name !== POPUP_PORT) return;
  const refusal = popups.accept(port as unknown as ConnectingPortLike, own);
  if (refusal !== null) log(`popup port refused: ${refusal}`);
});

const micoff = installTestSurface({ host, audio, settings, tabs, popups, phase, saved });
const ctx: BackgroundContext = {
  host,
  audio,
  settings,
  tabs,
  popups,
  expose: (name, value) => {
    micoff[name] = value;
  },
  log,
};
for (const start of FEATURES) start(ctx);
host.start();
