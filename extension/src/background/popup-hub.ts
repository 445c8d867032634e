// Open popups: each connects a port named POPUP_PORT; while at least one is open the hub holds a 1 Hz
// `cpu` subscription at the host, and it pushes host status, audio streams, the popup's tab state and
// doctor results to every popup. Closing the last popup drops the CPU subscription.
import { cpuView } from '../shared/cpu-view.ts';
import { parseDoctorFindings } from '../shared/doctor.ts';
import { type BackgroundToPopup, parsePopupMessage } from '../shared/messages/popup-background.ts';
import { CPU_INTERVAL_MS } from '../shared/protocol.ts';
import type { AudioMonitor } from './audio-monitor.ts';
import type { HostClient, Subscription } from './host-client.ts';
import type { TabViews } from './popup-tab-views.ts';

export interface PopupPortLike {
  postMessage(message: BackgroundToPopup): void;
  onMessage: { addListener(cb: (message: unknown) => void): void };
  onDisconnect: { addListener(cb: () => void): void };
}

export interface PopupHubDeps {
  host: Pick<HostClient, 'status' | 'onStatus' | 'subscribe' | 'request' | 'reconnect'>;
  audio: Pick<AudioMonitor, 'snapshot' | 'onChange'>;
  tabs: Pick<TabViews, 'get' | 'onChange'>;
  cpuIntervalMs?: number;
}

export interface PopupHub {
  attach(port: PopupPortLike): void;
  /** Open popups. */
  count(): number;
  /** The host's number for the CPU subscription, null while none (no popup open, or not connected). */
  cpuSubscription(): number | null;
}

export function createPopupHub(deps: PopupHubDeps): PopupHub {
  const popups = new Map<PopupPortLike, { tabId: number | null }>();
  let cpu: Subscription | null = null;

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
    }
  }

  return {
    attach(port) {
      popups.set(port, { tabId: null });
      port.onMessage.addListener((m) => onMessage(port, m));
      port.onDisconnect.addListener(() => {
        popups.delete(port);
        if (popups.size === 0 && cpu) {
          void cpu.close();
          cpu = null;
        }
      });
      send(port, { type: 'host_status', status: deps.host.status() });
      send(port, { type: 'audio', audio: deps.audio.snapshot() });
      if (!cpu) {
        cpu = deps.host.subscribe(
          { type: 'subscribe', topic: 'cpu', interval_ms: deps.cpuIntervalMs ?? CPU_INTERVAL_MS.default },
          (e) => {
            if (e.type === 'cpu') broadcast({ type: 'cpu', view: cpuView(e.report) });
          },
        );
      }
    },
    count: () => popups.size,
    cpuSubscription: () => cpu?.id ?? null,
  };
}
