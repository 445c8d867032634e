// Release-on-mute's timing bars (release-timing-util.ts) with the browser as the mic source's only
// recorder: the rig without its 10 ms `parec` reader, which would keep the source running and hide
// what a reopen costs (docs/design/release-on-mute.md, "First words").
import { test } from '../rig/fixtures.ts';
import { releaseAndResume } from './release-timing-util.ts';

test.use({ rigOptions: { reader: false } });

test('release and resume latency, the browser the only recorder (medians over cycles)', async ({
  rig,
  openMeeting,
  serviceWorker,
}) => {
  await releaseAndResume(rig, openMeeting, serviceWorker, false);
});
