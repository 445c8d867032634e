// What the bridge reports for a realm's groups (shared/messages/page-content.ts GroupReport): state,
// since when, why kept, how many tracks and how many enabled, echo cancellation, the latency guard, how
// long its latest open took to deliver audio.
import type { GroupReport } from '../../../shared/messages/page-content.ts';
import { groupState, keptReason } from '../machine/group-machine.ts';
import { type Group, liveMembers, type Member } from './members.ts';

/** The popup shows at most this much of a device's label. */
const LABEL_MAX = 200;

/** Every group's report. A group's `since` moves when its state changes; a group whose tracks all
 * ended is reported once, then forgotten (removed from `groups`). */
export function reportGroups(
  groups: Map<string, Group>,
  dateNow: () => number,
  grantMayExpire = false,
): GroupReport[] {
  const out: GroupReport[] = [];
  for (const g of groups.values()) {
    const state = groupState(g);
    if (state !== g.reported) {
      g.reported = state;
      g.since = dateNow();
    }
    const live = liveMembers(g);
    out.push({
      id: g.id,
      state,
      since_ms: g.since,
      reason: state === 'not_released' ? keptReason(g) : state === 'ended' ? g.endedWhy : null,
      label: g.label.slice(0, LABEL_MAX),
      tracks: live.length,
      enabled: live.filter((m) => m.enabled).length,
      echo_cancellation: echoCancellationOf(live),
      latency_guard: live.find((m) => m.guard)?.guard ?? null,
      grant_may_expire: grantMayExpire,
      first_audio: g.firstAudio,
    });
    if (state === 'ended') groups.delete(g.deviceId);
  }
  return out;
}

/** Echo cancellation as the browser granted it to these tracks (their settings when adopted): false
 * when any has it off, true when all have it on, null when unknown. */
export function echoCancellationOf(live: readonly Member[]): boolean | null {
  const ec = live.map((m) => (m.settings as { echoCancellation?: unknown }).echoCancellation);
  if (ec.some((v) => v === false)) return false;
  return ec.length > 0 && ec.every((v) => v === true) ? true : null;
}
