// Messages from the content script (one per frame) to the background about release-on-mute, over
// chrome.runtime.sendMessage (the background knows the tab and frame from the sender).
import type { GroupReport } from './page-protocol.ts';

/** The frame's microphone permission as the content script's own `navigator.permissions` reports it
 * (read in the isolated world, which page scripts cannot patch; 'unknown' where the browser cannot say).
 * The background counts a frame's reports and answers its questions about devices only while this is
 * 'granted' (issue 15 item 1). */
export type MicPermission = 'granted' | 'denied' | 'prompt' | 'unknown';
export const MIC_PERMISSIONS: readonly MicPermission[] = ['granted', 'denied', 'prompt', 'unknown'];

export type ContentToBackground =
  /** This frame's capture devices (empty when the frame goes away or stops capturing). */
  | { type: 'release_state'; url: string; mic: MicPermission; groups: GroupReport[] }
  /** May the device with this label be released now? Answered with a ReleasePolicyAnswer. */
  | { type: 'release_policy'; url: string; mic: MicPermission; label: string };

export interface ReleasePolicyAnswer {
  allow: boolean;
  reason: string | null;
}

export function isContentToBackground(m: unknown): m is ContentToBackground {
  if (typeof m !== 'object' || m === null) return false;
  const v = m as Record<string, unknown>;
  if (typeof v.url !== 'string' || !MIC_PERMISSIONS.includes(v.mic as MicPermission)) return false;
  if (v.type === 'release_state') return Array.isArray(v.groups);
  if (v.type === 'release_policy') return typeof v.label === 'string';
  return false;
}
