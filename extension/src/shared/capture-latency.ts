// Capture latency: the choices the options page offers, the administrator's value from
// managed storage, and the few summaries the options page and the popup show from the host's
// `latency_status`. What is configured lives at the host (the files it wrote); the extension keeps no
// copy of it. micoff never passes a `latency` constraint to the browser: the setting takes effect at
// the audio server or in the browser's launch environment (see docs/design/capture-latency.md).
import { UNNAMED_PROGRAM } from './browser-streams.ts';
import type { LatencyStatus, LatencyStream } from './protocol.ts';

/** What the options page offers: null = the browser's default (10 ms fragments in Chromium). */
export const CAPTURE_LATENCY_CHOICES: readonly (number | null)[] = [null, 20, 40, 60];

/** The managed-storage key (Chrome policy `3rdparty.extensions.<id>`, Firefox `3rdparty.Extensions.<id>`);
 * its schema is extension/src/managed_schema.json. 0 means the browser's default. */
export const MANAGED_CAPTURE_LATENCY_KEY = 'captureLatencyMs';

/** The administrator's choice: absent (the user decides) or a value the user cannot change. */
export type ManagedLatency =
  | { managed: false; invalid: string | null }
  | { managed: true; capture_ms: number | null };

/** A managed-storage object -> the administrator's choice. A value outside the choices is ignored (the
 * user keeps control) and named, so the options page can say why. */
export function parseManagedLatency(items: Record<string, unknown> | undefined | null): ManagedLatency {
  const raw = items?.[MANAGED_CAPTURE_LATENCY_KEY];
  if (raw === undefined || raw === null) return { managed: false, invalid: null };
  if (raw === 0) return { managed: true, capture_ms: null };
  if (typeof raw === 'number' && CAPTURE_LATENCY_CHOICES.includes(raw)) {
    return { managed: true, capture_ms: raw };
  }
  return {
    managed: false,
    invalid: `managed ${MANAGED_CAPTURE_LATENCY_KEY} = ${JSON.stringify(raw)?.slice(0, 40)} is not one of 0, 20, 40, 60`,
  };
}

/** The part of chrome.storage.managed the extension uses. Reading it fails where there is no policy
 * backend (Firefox without policies.json answers with an error): that means "not managed". */
export interface ManagedAreaLike {
  get(key: string): Promise<Record<string, unknown>>;
}

export async function readManagedLatency(area: ManagedAreaLike | undefined): Promise<ManagedLatency> {
  if (!area) return { managed: false, invalid: null };
  try {
    return parseManagedLatency(await area.get(MANAGED_CAPTURE_LATENCY_KEY));
  } catch {
    return { managed: false, invalid: null };
  }
}

export function choiceLabel(ms: number | null): string {
  return ms === null ? 'browser default (10 ms)' : `${ms} ms`;
}

/** The value of a <select> option for a choice, and back. */
export const choiceValue = (ms: number | null): string => (ms === null ? 'default' : String(ms));
export function parseChoice(value: string): number | null | undefined {
  if (value === 'default') return null;
  const n = Number(value);
  return CAPTURE_LATENCY_CHOICES.includes(n) ? n : undefined;
}

/** The host's configured capture latency (null = the browser's default, nothing written). */
export const configuredMs = (s: LatencyStatus): number | null => s.configured?.capture_ms ?? null;

/** Would the managed value change what the host has configured? */
export function managedNeedsApply(m: ManagedLatency, s: LatencyStatus): boolean {
  return m.managed && m.capture_ms !== configuredMs(s);
}

/** One line about what is configured and whether it is in effect, for the options page. */
export function configuredLine(s: LatencyStatus): string {
  const c = s.configured;
  if (!c) return 'Nothing configured: the browser captures with its default (10 ms fragments).';
  const how =
    c.mechanism === 'pipewire_pulse_rule'
      ? 'a pipewire-pulse rule for the browsers’ capture clients and Chromium’s playback'
      : c.mechanism === 'launch_environment'
        ? 'PULSE_LATENCY_MSEC in the browsers’ launch environment (playback latency changes too)'
        : c.mechanism;
  const effect =
    s.needs_restart.length > 0
      ? `not in effect yet: restart ${s.needs_restart.join(' and ')}.`
      : c.in_effect === true
        ? 'in effect.'
        : c.in_effect === false
          ? 'not in effect.'
          : 'no capture stream open to prove it by.';
  return `${c.capture_ms} ms through ${how}; ${effect}`;
}

export interface GrantedView {
  /** The browser's capture streams considered (the tab's, when they can be told apart). */
  streams: LatencyStream[];
  /** Lowest and highest granted latency over them, ms (null without streams). */
  min_ms: number | null;
  max_ms: number | null;
  /** Recorders holding the source down to a lower latency (PulseAudio grants the lowest request). */
  holders: string[];
}

/** The capture latency the server grants this browser, for the popup. `indices`: the record streams
 * of the tab when known (matched by source from the host's audio view), else every Chromium stream. */
export function grantedView(s: LatencyStatus, indices: readonly number[] | null): GrantedView {
  const browser = s.streams;
  const mine = indices && indices.length > 0 ? browser.filter((x) => indices.includes(x.index)) : [];
  const streams = mine.length > 0 ? mine : browser;
  const ms = streams.map((x) => x.capture_latency_us / 1000);
  const holders = new Set<string>();
  for (const x of streams) {
    for (const h of x.held_down_by) {
      const who = h.client_name ?? UNNAMED_PROGRAM;
      holders.add(
        `${who}${h.application_process_id ? ` (pid ${h.application_process_id})` : ''} at ${Math.round(h.latency_us / 1000)} ms`,
      );
    }
  }
  return {
    streams,
    min_ms: ms.length ? Math.min(...ms) : null,
    max_ms: ms.length ? Math.max(...ms) : null,
    holders: [...holders],
  };
}

export function grantedLine(g: GrantedView): string {
  if (g.min_ms === null || g.max_ms === null) return 'Capture latency: no capture stream at the server.';
  const fmt = (v: number) => `${Math.round(v)} ms`;
  const range =
    Math.round(g.min_ms) === Math.round(g.max_ms) ? fmt(g.min_ms) : `${fmt(g.min_ms)}–${fmt(g.max_ms)}`;
  const held = g.holders.length > 0 ? `; held down by ${g.holders.join(', ')}` : '';
  return `Capture latency granted by the server: ${range}${held}.`;
}
