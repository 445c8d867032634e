// The group machine's two effects that take a device away from the page's tracks: the release (the
// real tracks stop, the page-visible ones stay live and read as before) and the end (the device
// cannot come back: the page's tracks end as on unplug).
import type { Originals, Track } from '../../common/originals.ts';
import type { Group, Member } from './members.ts';
import type { SenderStandIns } from './sender-stand-ins.ts';

/** Release: remember what the page reads while the device is off, then stop the real tracks; with
 * `standIns`, each sender that carried one sends silence from a stand-in instead (`alias` records the
 * stand-in as the member's, so the page's `sender.track` and the audio graph read it as its track). */
export function stopTracks(
  o: Originals,
  g: Group,
  standIns?: { of: SenderStandIns; alias(t: Track, m: Member): void },
): void {
  for (const m of g.members) {
    if (m.ended) continue;
    try {
      const ids = { deviceId: m.settings.deviceId, groupId: m.settings.groupId };
      m.settings = { ...o.getSettings.call(m.real), ...ids };
      m.capabilities = { ...o.getCapabilities.call(m.real), ...ids };
    } catch {}
    o.stop.call(m.real);
    if (!standIns) continue;
    for (const s of m.senders)
      if (o.senderTrack?.call(s) === m.real) standIns.of.cover(s, (t) => standIns.alias(t, m));
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
