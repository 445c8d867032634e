// The suite's fixtures (e2e/rig/fixtures.ts) plus `releasing`: the call opened after setting release at
// once on mute (no delay), the common start of a release spec.
import { test as base } from '../rig/fixtures.ts';
import type { MeetingPage } from '../rig/meeting-page.ts';
import { openMeetingReleasingAtOnce } from './release-util.ts';

export const test = base.extend<{ releasing: MeetingPage }>({
  releasing: async ({ serviceWorker, openMeeting }, use) => {
    await use(await openMeetingReleasingAtOnce(serviceWorker, openMeeting));
  },
});

export { expect } from '../rig/fixtures.ts';
