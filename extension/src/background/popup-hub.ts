// Open popups: each connects a port named POPUP_PORT; the hub pushes host status, audio streams, the
// popup's tab state, doctor results, live CPU and the audio path's CPU history to every popup. The
// history is micoff-host's (it samples the audio path itself during a call and sends nothing:
// docs/design/popup-savings.md); the hub subscribes to it only while a popup is open: the first event
// brings the whole history, each later one a sample and its CPU report (the live table).

import { cpuView } from '../shared/cpu-view.ts';
import { parseDoctorFindings } from '../shared/doctor.ts';
import { type BackgroundToPopup, parsePopupMessage } from '../shared/messages/popup-background.ts';
import { CPU_INTERVAL_MS, type HistorySnapshot, isPowerReading } from '../shared/protocol.ts';
import type { AudioMonitor } from './audio-monitor.ts';
import { nextHistory } from './history-view.ts';
import type { HostClient, Subscription } from './host-client.ts';
import type { TabViews } from './popup-tab-views.ts';
import type { SavedCpu } from './saved-cpu.ts';
import { type ExtensionSelf, type SenderLike, uiSenderRefusal } from './ui-sender.ts';

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
  tabs: Pick<TabViews, 'get' | 'onChange'>;
  /** CPU-seconds saved since the browser started (the host's figure plus earlier hosts'). */
  saved: Pick<SavedCpu, 'total' | 'fromHost'>;
  /** How often the host samples while a popup is open. */
  historyIntervalMs?: number;
}

export interface PopupHub {
  /** A port from runtime.onConnect: attached when our own UI page opened it, else closed unanswered.
   * Returns why it was refused (null when attached). */
  accept(port: ConnectingPortLike, self: ExtensionSelf): string | null;
  attach(port: PopupPortLike): void;
  /** Open popups. */
  count(): number;
  /** The host's number for the history subscription, null while none (no popup open, or not
   * connected). */
  historySubscription(): number | null;
  /** The history as the open popups have it (null while none is open), saved figure since the
   * browser started. */
  history(): HistorySnapshot | null;
}

export function createPopupHub(deps: PopupHubDeps): PopupHub {
  const popups = new Map<PopupPortLike, { tabId: number | null }>();
  let sub: Subscription | null = null;
  let history: HistorySnapshot | null = null;
  const shown = (h: HistorySnapshot): HistorySnapshot => ({ ...h, saved_cpu_s: deps.saved.total() });
  /** Subscribed exactly while a popup is open. */
  const updateSubscription = () => {
    if (popups.size > 0 && !sub) {
      const interval_ms = deps.historyIntervalMs ?? CPU_INTERVAL_MS.default;
      sub = deps.host.subscribe({ type: 'subscribe', topic: 'history', interval_ms }, (e) => {
        if (e.type !== 'history') return;
        history = nextHistory(history, e);
        deps.saved.fromHost(e.history.saved_cpu_s);
        if (e.report) broadcast({ type: 'cpu', view: cpuView(e.report) });
        broadcast({ type: 'history', history: shown(history) });
      });
    } else if (popups.size === 0 && sub) {
      void sub.close();
      sub = null;
      history = null;
    }
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
        updateSubscription();
      });
      send(port, { type: 'host_status', status: deps.host.status() });
      send(port, { type: 'audio', audio: deps.audio.snapshot() });
      if (history) send(port, { type: 'history', history: shown(history) });
      updateSubscription();
    },
    count: () => popups.size,
    historySubscription: () => sub?.id ?? null,
    history: () => (history ? shown(history) : null),
  };
  return hub;
}
