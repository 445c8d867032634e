// The CPU-seconds micoff saved since the browser started, as the popup shows them: what the connected
// micoff-host's history says its releases saved (docs/design/popup-savings.md), plus what earlier hosts
// said (a host lives as long as its connection: a reconnect or a service-worker restart starts a new
// one). Kept in storage.session (savings-store.ts) each time a host's figure comes in: at every phase
// change and with every sample a popup watches. A host that goes away mid-release takes what it saved
// since the last phase change with it.
import type { SavingsStore } from './savings-store.ts';

export interface SavedCpu {
  /** Since the browser started. */
  total(): number;
  /** The connected host's own figure (since it started). */
  fromHost(savedCpuS: number): void;
  /** The host went away: its last figure becomes part of the earlier hosts'. */
  hostGone(): void;
}

export function createSavedCpu(store: SavingsStore | undefined): SavedCpu {
  let earlier = 0;
  let host = 0;
  const loaded = (store?.load() ?? Promise.resolve(0)).then(
    (v) => {
      earlier += v;
    },
    () => {},
  );
  const save = () => void loaded.then(() => store?.save(earlier + host));
  return {
    total: () => earlier + host,
    fromHost(v) {
      if (v === host) return;
      host = v;
      save();
    },
    hostGone() {
      earlier += host;
      host = 0;
    },
  };
}
