// Which capture device a track is on, and which device to reopen. Pure: the interposition supplies the
// track settings and the enumerateDevices() list.

/** Tracks on one device share a group: keyed by the deviceId Chromium reports for the track. */
export function groupKey(settings: Pick<MediaTrackSettings, 'deviceId'>): string {
  return settings.deviceId ?? '';
}

const VIRTUAL_IDS = new Set(['default', 'communications']);

/** Is this one of Chromium's virtual entries that follow the system default? */
export function isVirtualDeviceId(id: string | undefined): boolean {
  return id !== undefined && VIRTUAL_IDS.has(id);
}

/** Chromium names the system default "default" (and "communications" on Windows). Reopening that after
 * the default moved would open another device: the concrete device is the audio input with the same
 * groupId that is not one of the virtual entries. null when the track is on a concrete device already
 * or none matches. */
export function concreteDeviceId(
  settings: Pick<MediaTrackSettings, 'deviceId' | 'groupId'>,
  devices: readonly Pick<MediaDeviceInfo, 'kind' | 'deviceId' | 'groupId'>[],
): string | null {
  if (!settings.deviceId || !VIRTUAL_IDS.has(settings.deviceId)) return null;
  const d = devices.find(
    (x) => x.kind === 'audioinput' && x.groupId === settings.groupId && !VIRTUAL_IDS.has(x.deviceId),
  );
  return d ? d.deviceId : null;
}

/** The audio constraints for reopening: the page's own, with the device made exact. */
export function reacquireConstraints(
  asked: boolean | MediaTrackConstraints | undefined,
  deviceId: string,
): MediaTrackConstraints {
  const base: MediaTrackConstraints = typeof asked === 'object' && asked !== null ? { ...asked } : {};
  return deviceId ? { ...base, deviceId: { exact: deviceId } } : base;
}
