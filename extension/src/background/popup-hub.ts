// Open popups: each connects a port named POPUP_PORT; the hub pushes host status, audio streams, the
// popup's tab state, doctor results and the CPU history to every popup. The hub holds a 1 Hz `cpu`
// subscription at the host while a popup is open OR a tab holds a microphone (so the chart has the
// last minutes when a popup opens, and the CPU saved by a release is measured against the rate
// before it: cpu-history.ts); it drops it when neither is true.

import { audioPathCpuPct, cpuView } from '../shared/cpu-view.ts';
import { parseDoctorFindings } from '../shared/doctor.ts';
import { type BackgroundToPopup, parsePopupMessage } from '../shared/messages/popup-background.ts';
import { CPU_INTERVAL_MS, isPowerReading } from '../shared/protocol.ts';
import type { AudioMonitor } from './audio-monitor.ts';
import { CpuHistory, phaseOf } from './cpu-history.ts';
import type { HostClient, Subscription } from './host-client.ts';
import type { TabViews } from './popup-tab-views.ts';
import type { SavingsStore } from './savings-store.ts';
import { type ExtensionSelf, type SenderLike, uiSenderRefusal } from './ui-sender.ts';

/** The cpu subscription's interval while no popup is open but a tab holds a microphone. */
export const BACKGROUND_CPU_INTERVAL_MS = 5000;

export interface PopupPortLike {
  postMessage(message: BackgroundToPopup): void;
  onMessage: { addListener(cb: (message: unknown) => void): void };
  onDisconnect: { addListener(cb: () => void): void };
}

/** A port as runtime.onConnect hands it over: the browser's view of who opened it, and a way to close it. */
export interface ConnectingPortLike extends PopupPortLike {
  sender?: SenderLike;
  disconnect(): void;
}

export interface PopupHubDeps {
  host: Pick<HostClient, 'status' | 'onStatus' | 'subscribe' | 'request' | 'reconnect'>;
  audio: Pick<AudioMonitor, 'snapshot' | 'onChange'>;
  tabs: Pick<TabViews, 'get' | 'onChange' | 'all'>;
  cpuIntervalMs?: number;
  now?: () => number;
  /** CPU-seconds saved since the browser started, kept across background restarts. */
  savings?: SavingsStore;
}

export interface PopupHub {
  /** A port from runtime.onConnect: attached when our own UI page opened it, else closed unanswered.
   * Returns why it was refused (null when attached). */
  accept(port: ConnectingPortLike, self: ExtensionSelf): string | null;
  attach(port: PopupPortLike): void;
  /** Open popups. */
  count(): number;
  /** The host's number for the CPU subscription, null while none (no popup open and no microphone
   * in use, or not connected). */
  cpuSubscription(): number | null;
  history: CpuHistory;
}

export function createPopupHub(deps: PopupHubDeps): PopupHub {
  const popups = new Map<PopupPortLike, { tabId: number | null }>();
  let cpu: Subscription | null = null;
  const history = new CpuHistory(deps.now ?? Date.now);
  void deps.savings?.load().then(
    (s) => history.restore(s),
    () => {},
  );
  const micInUse = () => history.snapshot().phase !== 'idle';
  /** Subscribed exactly while a popup is open (every `cpuIntervalMs`) or a microphone is in use
   * (every BACKGROUND_CPU_INTERVAL_MS: the history at a fifth of the cost while nobody looks). */
  let interval = 0;
  const updateCpu = () => {
    const want =
      popups.size > 0
        ? (deps.cpuIntervalMs ?? CPU_INTERVAL_MS.default)
        : micInUse()
          ? BACKGROUND_CPU_INTERVAL_MS
          : 0;
    if (cpu && want !== interval) {
      void cpu.close();
      cpu = null;
    }
    interval = want;
    if (want === 0 || cpu) return;
    cpu = deps.host.subscribe({ type: 'subscribe', topic: 'cpu', interval_ms: want }, (e) => {
      if (e.type !== 'cpu') return;
      if (history.addSample(audioPathCpuPct(e.report), e.report.window_ms) !== 0)
        deps.savings?.save(history.savedCpuS());
      if (popups.size === 0) return;
      broadcast({ type: 'cpu', view: cpuView(e.report) });
      broadcast({ type: 'history', history: history.snapshot() });
    });
  };

  const send = (port: PopupPortLike, msg: BackgroundToPopup) => {
    try {
      port.postMessage(msg);
    } catch {
      popups.delete(port); // closed between the event and this send
    }
  };
  const broadcast = (msg: BackgroundToPopup) => {
    for (const port of popups.keys()) send(port, msg);
  };

  deps.host.onStatus((status) => broadcast({ type: 'host_status', status }));
  deps.audio.onChange((audio) => broadcast({ type: 'audio', audio }));
  deps.tabs.onChange((tabId, tab) => {
    history.setPhase(phaseOf(deps.tabs.all().values()));
    updateCpu();
    for (const [port, p] of popups) if (p.tabId === tabId) send(port, { type: 'tab', tab_id: tabId, tab });
  });

  function onMessage(port: PopupPortLike, raw: unknown): void {
    const msg = parsePopupMessage(raw);
    switch (msg?.type) {
      case 'popup_hello': {
        const tabId = msg.tab_id;
        const entry = popups.get(port);
        if (entry) entry.tabId = tabId;
        if (tabId !== null) send(port, { type: 'tab', tab_id: tabId, tab: deps.tabs.get(tabId) });
        break;
      }
      case 'host_reconnect':
        deps.host.reconnect();
        break;
      case 'run_doctor':
        deps.host.request({ type: 'doctor' }).then(
          (result) =>
            send(port, { type: 'doctor', result: { ok: true, findings: parseDoctorFindings(result) } }),
          (err: Error) => send(port, { type: 'doctor', result: { ok: false, message: err.message } }),
        );
        break;
      case 'get_power':
        deps.host.request({ type: 'power' }).then(
          (reading) =>
            send(port, {
              type: 'power',
              result: isPowerReading(reading)
                ? { ok: true, reading }
                : { ok: false, message: 'micoff-host answered something else' },
            }),
          (err: Error) => send(port, { type: 'power', result: { ok: false, message: err.message } }),
        );
        break;
    }
  }

  const hub: PopupHub = {
    accept(port, self) {
      const refusal = uiSenderRefusal(port.sender, self);
      if (refusal !== null) {
        port.disconnect();
        return refusal;
      }
      hub.attach(port);
      return null;
    },
    attach(port) {
      popups.set(port, { tabId: null });
      port.onMessage.addListener((m) => onMessage(port, m));
      port.onDisconnect.addListener(() => {
        popups.delete(port);
        updateCpu();
      });
      send(port, { type: 'host_status', status: deps.host.status() });
      send(port, { type: 'audio', audio: deps.audio.snapshot() });
      send(port, { type: 'history', history: history.snapshot() });
      updateCpu();
    },
    count: () => popups.size,
    cpuSubscription: () => cpu?.id ?? null,
    history,
  };
  return hub;
}
