// What the background has learned about how fast each site's microphones deliver their first audio after
// an open (shared/first-words.ts), per origin and device label, kept in storage.local so that a reload
// or a browser restart keeps it. Loaded once at start into memory (the release answer reads it
// synchronously); every change is written back, fire and forget. At most MAX_ENTRIES, the least recently
// measured dropped first.
import {
  EMPTY_ENTRY,
  type FirstAudio,
  type FirstAudioEntry,
  learnFirstAudio,
  parseFirstAudio,
} from '../shared/first-words.ts';
import type { StorageAreaLike } from '../shared/settings.ts';

export const FIRST_AUDIO_KEY = 'micoff_first_audio';
export const MAX_ENTRIES = 64;

export interface FirstAudioStore {
  /** Resolves once what an earlier life stored is in (measurements made meanwhile are kept). */
  ready: Promise<void>;
  get(origin: string, label: string): FirstAudioEntry | null;
  /** A measurement on `origin`'s device `label`, made while the host was or was not connected. */
  learn(origin: string, label: string, sample: FirstAudio, hostConnected: boolean): void;
  all(): Record<string, FirstAudioEntry>;
}

const keyOf = (origin: string, label: string) => `${origin}\n${label}`;

function parseEntry(v: unknown): FirstAudioEntry | null {
  if (typeof v !== 'object' || v === null) return null;
  const { no_host, host } = v as Record<string, unknown>;
  const entry = { no_host: parseFirstAudio(no_host), host: parseFirstAudio(host) };
  return entry.no_host || entry.host ? entry : null;
}

/** Over `area` (storage.local); without one, what is learned lasts as long as this background. */
export function createFirstAudioStore(area: StorageAreaLike | undefined): FirstAudioStore {
  const entries = new Map<string, FirstAudioEntry>();
  const save = () => void area?.set({ [FIRST_AUDIO_KEY]: Object.fromEntries(entries) }).catch(() => {});
  // The map's order is the order of measurements (a measured entry is re-inserted last; the stored
  // object keeps that order): the first key is the least recently measured.
  const trim = () => {
    for (const k of entries.keys()) {
      if (entries.size <= MAX_ENTRIES) return;
      entries.delete(k);
    }
  };
  const ready = (async () => {
    if (!area) return;
    try {
      const stored = (await area.get(FIRST_AUDIO_KEY))[FIRST_AUDIO_KEY];
      if (typeof stored !== 'object' || stored === null) return;
      for (const [k, v] of Object.entries(stored)) {
        const e = parseEntry(v);
        if (e && !entries.has(k)) entries.set(k, e);
      }
      trim();
    } catch {}
  })();
  return {
    ready,
    get: (origin, label) => entries.get(keyOf(origin, label)) ?? null,
    learn(origin, label, sample, hostConnected) {
      const k = keyOf(origin, label);
      const held = entries.get(k) ?? EMPTY_ENTRY;
      const next = learnFirstAudio(held, sample, hostConnected);
      if (next === held) return;
      entries.delete(k);
      entries.set(k, next);
      trim();
      save();
    },
    all: () => Object.fromEntries(entries),
  };
}

/** The store over the browser's storage.local. */
export function browserFirstAudioStore(): FirstAudioStore {
  return createFirstAudioStore(chrome.storage?.local);
}
