// Release-on-mute's timing bars on the shared rig (its own 10 ms recorder on the mic): what they measure
// is in release-timing-util.ts; release-timing-only-recorder.spec.ts runs them with the browser as the
// source's only recorder.
import { test } from '../rig/fixtures.ts';
import { releaseAndResume } from './release-timing-util.ts';

test('release and resume latency (medians over cycles)', async ({ rig, openMeeting, serviceWorker }) => {
  await releaseAndResume(rig, openMeeting, serviceWorker, true);
});
