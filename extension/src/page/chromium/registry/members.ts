// Who is who in one realm: which page-visible track stands for which real track (members), which
// tracks share a device (groups, by deviceId), and how to reopen a device (roots). The real track's
// own events reach the page's track from here: `ended` when the device goes away, `mute` / `unmute`
// while it is the member's current real track.

import type { FirstAudio } from '../../../shared/first-words.ts';
import type { GroupReport } from '../../../shared/messages/page-content.ts';
import { concreteDeviceId, isVirtualDeviceId } from '../../common/device-groups.ts';
import type { Originals, Track } from '../../common/originals.ts';
import { freshMachineState, type MachineGroup } from '../machine/group-machine.ts';

export interface Root {
  /** Audio constraints for reacquiring: the page's own, deviceId made exact. */
  constraints: MediaTrackConstraints;
  /** Settles once `constraints` name the concrete device (see pinDevice). */
  pinned: Promise<void>;
}

export interface Member {
  page: Track;
  real: Track;
  enabled: boolean;
  ended: boolean;
  group: Group;
  root: Root;
  settings: MediaTrackSettings;
  capabilities: MediaTrackCapabilities;
  constraints: MediaTrackConstraints;
  /** The page's last applyConstraints (applied again after every reacquire). */
  applied: MediaTrackConstraints | null;
  senders: Set<RTCRtpSender>;
  /** Why micoff kept echo cancellation on against the page's `latency` request (latency-guard.ts). */
  guard: string | null;
  /** The outgoing audio is held back while a fresh capture's echo canceller converges (echo-guard.ts):
   * the real track is disabled whatever the page's `enabled` says. */
  heldBack: boolean;
}

/** The real track's `enabled`: the page's, unless micoff holds the audio back (echo-guard.ts). */
export function applyEnabled(o: Originals, m: Member): void {
  if (m.real !== m.page && !m.ended) o.setEnabled.call(m.real, m.enabled && !m.heldBack);
}

export interface Group extends MachineGroup {
  id: string;
  deviceId: string;
  label: string;
  members: Set<Member>;
  reported: GroupReport['state'] | null;
  since: number;
  /** How long the device's latest open took to deliver its first audio (guards/first-audio.ts). */
  firstAudio: FirstAudio | null;
  /** How many of micoff's reopens in a row waited long once open (shared/first-words.ts slowReopenStreak). */
  slowReopens: number;
}

export interface MembersDeps {
  /** The device went away under a member: the group decides again. */
  evaluate(g: Group): void;
  /** A member ended for good (the patches close what they built on it). */
  ended(m: Member): void;
}

export type Members = ReturnType<typeof createMembers>;

export function createMembers(o: Originals, realm: number, deps: MembersDeps) {
  const members = new WeakMap<Track, Member>(); // page-visible track -> member
  const byReal = new WeakMap<Track, Member>(); // every real track we hand around -> member
  const groups = new Map<string, Group>(); // by deviceId
  let nextGroup = 1;

  const managedIn = (s: MediaStream): Member[] => {
    const out: Member[] = [];
    for (const t of o.getTracks.call(s)) {
      const m = members.get(t);
      if (m) out.push(m);
    }
    return out;
  };
  const realOf = (t: Track) => members.get(t)?.real ?? t;
  const liveIn = (s: MediaStream) => managedIn(s).some((m) => !m.ended);

  /** The member is gone for good (the page stopped it, or its device went away). */
  function markEnded(m: Member): void {
    if (m.ended) return;
    m.ended = true;
    deps.ended(m);
  }

  function watchReal(m: Member, real: Track): void {
    o.addEventListener.call(real, 'ended', () => {
      if (m.real !== real || m.ended) return;
      // The device went away (the page's stop() and our release never fire `ended`).
      markEnded(m);
      if (real !== m.page) o.dispatchEvent.call(m.page, new o.Event('ended'));
      deps.evaluate(m.group);
    });
    if (real === m.page) return;
    for (const type of ['mute', 'unmute']) {
      o.addEventListener.call(real, type, () => {
        if (m.real === real && !m.ended) o.dispatchEvent.call(m.page, new o.Event(type));
      });
    }
  }

  /** The member's real track is `next` from now on (a reacquire): its events are the page's. */
  function rebind(m: Member, next: Track): void {
    m.real = next;
    byReal.set(next, m);
    watchReal(m, next);
  }

  function groupFor(deviceId: string, label: string): Group {
    let g = groups.get(deviceId);
    if (!g) {
      g = {
        id: `${realm}.${nextGroup++}`,
        deviceId,
        label,
        members: new Set(),
        ...freshMachineState(o.now()),
        reported: null,
        since: o.dateNow(),
        firstAudio: null,
        slowReopens: 0,
      };
      groups.set(deviceId, g);
    }
    return g;
  }

  /** A new page-visible track on `group`: from getUserMedia (page === real) or a clone of `from`. */
  function addMember(page: Track, real: Track, group: Group, root: Root, from?: Member): Member {
    const m: Member = {
      page,
      real,
      enabled: from ? from.enabled : o.getEnabled.call(page),
      ended: false,
      group,
      root,
      settings: from ? { ...from.settings } : o.getSettings.call(real),
      capabilities: from ? { ...from.capabilities } : o.getCapabilities.call(real),
      constraints: from ? { ...from.constraints } : o.getConstraints.call(real),
      applied: from?.applied ?? null,
      senders: new Set(),
      guard: from?.guard ?? null,
      heldBack: false,
    };
    members.set(page, m);
    byReal.set(real, m);
    group.members.add(m);
    watchReal(m, real);
    return m;
  }

  /** Pin the concrete device behind Chromium's "default" (see device-groups.ts). */
  async function pinDevice(root: Root, settings: MediaTrackSettings): Promise<void> {
    if (!isVirtualDeviceId(settings.deviceId)) return;
    const id = concreteDeviceId(settings, await o.enumerateDevices.call(o.mediaDevices));
    if (id) root.constraints = { ...root.constraints, deviceId: { exact: id } };
  }

  return {
    members,
    byReal,
    groups,
    managedIn,
    realOf,
    liveIn,
    markEnded,
    rebind,
    groupFor,
    addMember,
    pinDevice,
  };
}

/** The group's members still live (the page has not stopped them, their device is there). */
export function liveMembers(g: Group): Member[] {
  return [...g.members].filter((m) => !m.ended);
}
