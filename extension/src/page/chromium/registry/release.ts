// The group machine's two effects that take a device away from the page's tracks: the release (the
// real tracks stop, the page-visible ones stay live and read as before) and the end (the device
// cannot come back: the page's tracks end as on unplug).
import type { Originals } from '../../common/originals.ts';
import type { Group, Member } from './members.ts';

/** Release: remember what the page reads while the device is off, then stop the real tracks. */
export function stopTracks(o: Originals, g: Group): void {
  for (const m of g.members) {
    if (m.ended) continue;
    try {
      const ids = { deviceId: m.settings.deviceId, groupId: m.settings.groupId };
      m.settings = { ...o.getSettings.call(m.real), ...ids };
      m.capabilities = { ...o.getCapabilities.call(m.real), ...ids };
    } catch {}
    o.stop.call(m.real);
  }
}

/** The end: every live member ends for good, its real track stops and its page track fires `ended`. */
export function endTracks(o: Originals, markEnded: (m: Member) => void, g: Group): void {
  for (const m of g.members) {
    if (m.ended) continue;
    markEnded(m);
    o.stop.call(m.real);
    o.dispatchEvent.call(m.page, new o.Event('ended'));
  }
}
