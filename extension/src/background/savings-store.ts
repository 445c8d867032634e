// The CPU-seconds micoff saved since the browser started (saved-cpu.ts: the hosts' figures), kept
// across background restarts: storage.session outlives a service-worker restart and is cleared when
// the browser exits. saved-cpu.ts loads it once at start and saves it each time a host's figure comes in.
import type { StorageAreaLike } from '../shared/settings.ts';

export const SAVED_KEY = 'micoff_saved_cpu_s';

export interface SavingsStore {
  /** What an earlier life of the background saved; 0 when nothing (or nothing valid) is stored. */
  load(): Promise<number>;
  /** Fire and forget: a failed write loses at most what this life saved. */
  save(cpuS: number): void;
}

/** Over `area` (storage.session); without one (a browser before Firefox 115 / Chrome 102) nothing is
 * kept and every load reads 0. */
export function createSavingsStore(area: StorageAreaLike | undefined): SavingsStore {
  return {
    load: async () => {
      if (!area) return 0;
      const got = await area.get(SAVED_KEY);
      const v = got[SAVED_KEY];
      return typeof v === 'number' && Number.isFinite(v) ? v : 0;
    },
    save: (cpuS) => void area?.set({ [SAVED_KEY]: cpuS }).catch(() => {}),
  };
}

/** The store over the browser's storage.session. */
export function browserSavingsStore(): SavingsStore {
  return createSavingsStore(chrome.storage?.session);
}
