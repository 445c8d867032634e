// The Firefox page world's bookkeeping (page/firefox/mute-observer.ts feeds it): which microphone tracks are
// live, on which device, enabled or not, and since when every live track on a device is disabled, the
// moment Firefox's own release (media.getusermedia.microphone.off_while_disabled) starts its delay; since
// when the device is on (Firefox counts its delay from there); and since when micoff keeps the device's
// senders quiet (page/firefox/quiet.ts sets it). Pure: tracks are opaque keys, the clock is passed in;
// no built-in is called here.
import type { GroupReport } from '../../shared/messages/page-content.ts';

interface Device {
  id: string;
  label: string;
  /** When the first track on the device was adopted. */
  since: number;
  /** When every live track was disabled; null while one is enabled. */
  mutedSince: number | null;
  /** When a track was last enabled on the device (or the device first seen): Firefox releases a muted
   * device once it has been on for its delay. */
  onSince: number;
  /** When micoff took the device's senders off the wire (page/firefox/quiet.ts); null while it has not. */
  quietSince: number | null;
}

/** A muted device as the quiet-senders rule reads it. */
export interface MutedDevice<T> {
  key: string;
  mutedSince: number;
  onSince: number;
  tracks: T[];
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
      device = {
        id: `ff.${this.next++}`,
        label,
        since: now,
        mutedSince: null,
        onSince: now,
        quietSince: null,
      };
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

  /** The device key of a watched track, or null. */
  deviceOf(track: T): string | null {
    return this.tracks.get(track)?.device ?? null;
  }

  /** The devices whose every live track is disabled, with those tracks. */
  muted(): MutedDevice<T>[] {
    const out: MutedDevice<T>[] = [];
    for (const [key, d] of this.devices) {
      if (d.mutedSince === null) continue;
      const tracks = [...this.tracks].filter(([, e]) => e.device === key).map(([t]) => t);
      out.push({ key, mutedSince: d.mutedSince, onSince: d.onSince, tracks });
    }
    return out;
  }

  /** The devices (keys) on which micoff now keeps senders quiet; each keeps the moment it became so.
   * Returns whether that changed the report. */
  setQuiet(keys: ReadonlySet<string>, now: number): boolean {
    let changed = false;
    for (const [key, d] of this.devices) {
      const since = keys.has(key) ? (d.quietSince ?? now) : null;
      if (d.quietSince !== since) {
        d.quietSince = since;
        changed = true;
      }
    }
    return changed;
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
        quiet_since_ms: d.quietSince,
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
    if (!muted && device.mutedSince !== null) {
      device.mutedSince = null;
      device.onSince = now;
    }
    return true;
  }
}
