// The Firefox page world's bookkeeping (page/mute-observer.ts feeds it): which microphone tracks are
// live, on which device, enabled or not, and since when every live track on a device is disabled, the
// moment Firefox's own release (media.getusermedia.microphone.off_while_disabled) starts its delay.
// Pure: tracks are opaque keys, the clock is passed in; no built-in is called here.
import type { GroupReport } from '../shared/messages/page-content.ts';

interface Device {
  id: string;
  label: string;
  /** When the first track on the device was adopted. */
  since: number;
  /** When every live track was disabled; null while one is enabled. */
  mutedSince: number | null;
}

interface Entry {
  device: string;
  enabled: boolean;
}

export class MuteBook<T extends object> {
  private readonly tracks = new Map<T, Entry>();
  private readonly devices = new Map<string, Device>();
  private next = 1;

  /** Is this one of the tracks being watched? */
  has(track: T): boolean {
    return this.tracks.has(track);
  }

  /** A live getUserMedia track (or a clone of one) on `deviceKey`. Returns false when already known. */
  add(track: T, deviceKey: string, label: string, enabled: boolean, now: number): boolean {
    if (this.tracks.has(track)) return false;
    let device = this.devices.get(deviceKey);
    if (!device) {
      device = { id: `ff.${this.next++}`, label, since: now, mutedSince: null };
      this.devices.set(deviceKey, device);
    }
    this.tracks.set(track, { device: deviceKey, enabled });
    this.settle(deviceKey, now);
    return true;
  }

  /** The page set `enabled` (the value read back from the track). Returns whether anything changed. */
  setEnabled(track: T, enabled: boolean, now: number): boolean {
    const entry = this.tracks.get(track);
    if (!entry || entry.enabled === enabled) return false;
    entry.enabled = enabled;
    return this.settle(entry.device, now);
  }

  /** The track was stopped or ended. Returns whether it was being watched. */
  remove(track: T, now: number): boolean {
    const entry = this.tracks.get(track);
    if (!entry) return false;
    this.tracks.delete(track);
    this.settle(entry.device, now);
    return true;
  }

  /** One report per device with live tracks. */
  report(): GroupReport[] {
    const out: GroupReport[] = [];
    for (const [key, d] of this.devices) {
      const live = [...this.tracks.values()].filter((e) => e.device === key);
      out.push({
        id: d.id,
        state: 'capturing',
        since_ms: d.since,
        reason: null,
        label: d.label,
        tracks: live.length,
        enabled: live.filter((e) => e.enabled).length,
        muted_since_ms: d.mutedSince,
      });
    }
    return out;
  }

  /** Recomputes the device's muted state after a change; drops it when no live track is left. Returns
   * whether the report changed (a count always changes with an add or a remove). */
  private settle(key: string, now: number): boolean {
    const device = this.devices.get(key);
    if (!device) return false;
    const live = [...this.tracks.values()].filter((e) => e.device === key);
    if (live.length === 0) {
      this.devices.delete(key);
      return true;
    }
    const muted = live.every((e) => !e.enabled);
    if (muted && device.mutedSince === null) device.mutedSince = now;
    if (!muted) device.mutedSince = null;
    return true;
  }
}
