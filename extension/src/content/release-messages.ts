// Messages from the content script (one per frame) to the background about release-on-mute, over
// chrome.runtime.sendMessage (the background knows the tab and frame from the sender).
import type { GroupReport } from './page-protocol.ts';

export type ContentToBackground =
  /** This frame's capture devices (empty when the frame goes away or stops capturing). */
  | { type: 'release_state'; url: string; groups: GroupReport[] }
  /** May the device with this label be released now? Answered with a ReleasePolicyAnswer. */
  | { type: 'release_policy'; url: string; label: string };

export interface ReleasePolicyAnswer {
  allow: boolean;
  reason: string | null;
}

export function isContentToBackground(m: unknown): m is ContentToBackground {
  if (typeof m !== 'object' || m === null) return false;
  const v = m as Record<string, unknown>;
  if (typeof v.url !== 'string') return false;
  if (v.type === 'release_state') return Array.isArray(v.groups);
  if (v.type === 'release_policy') return typeof v.label === 'string';
  return false;
}
