// Playwright fixtures for micoff's e2e suite:
//   worker scope: `audioServer` (option, per project), `rigOptions` (option: e.g.
//                 `test.use({ rigOptions: { reader: false } })`), `rig` (private PulseAudio or
//                 PipeWire), `pages` (the page server)
//   test scope:   `chromium` (launched with dist/chrome + the host manifest), `context` (its
//                 BrowserContext), `extensionId`, `serviceWorker` (Playwright Worker), `ext` (the
//                 test-surface driver), `browserPid`, `openMeeting(opts)`, `meetingPage` (unmuted call)
import { type BrowserContext, test as base, type Worker } from '@playwright/test';
import { type AudioRig, type AudioRigOptions, type AudioServerKind, startAudioRig } from './audio-rig.ts';
import { extensionServiceWorker, type LaunchedChromium, launchChromium } from './chromium.ts';
import { extensionId as builtExtensionId, requireHost } from './host.ts';
import { MeetingPage } from './meeting-page.ts';
import { type PageServer, startPageServer } from './page-server.ts';
import { ExtensionWorker } from './service-worker.ts';

export interface MeetingOptions {
  /** Play the received audio (needed for a received audioLevel; opens a playback stream). */
  playout?: boolean;
  /** getUserMedia constraints (default `{audio: true}`). */
  constraints?: MediaStreamConstraints;
}

export interface WorkerFixtures {
  audioServer: AudioServerKind;
  rigOptions: AudioRigOptions;
  rig: AudioRig;
  pages: PageServer;
}

export interface TestFixtures {
  chromium: LaunchedChromium;
  context: BrowserContext;
  extensionId: string;
  serviceWorker: Worker;
  ext: ExtensionWorker;
  browserPid: number;
  openMeeting: (opts?: MeetingOptions) => Promise<MeetingPage>;
  meetingPage: MeetingPage;
}

export const test = base.extend<TestFixtures, WorkerFixtures>({
  audioServer: ['pulseaudio', { option: true, scope: 'worker' }],
  rigOptions: [{}, { option: true, scope: 'worker' }],

  rig: [
    async ({ audioServer, rigOptions }, use) => {
      const rig = await startAudioRig(audioServer, rigOptions);
      try {
        await use(rig);
      } finally {
        await rig.stop();
      }
    },
    { scope: 'worker', timeout: 60_000 },
  ],

  pages: [
    // biome-ignore lint/correctness/noEmptyPattern: Playwright reads a fixture's dependencies from this pattern
    async ({}, use) => {
      const pages = await startPageServer();
      await use(pages);
      await pages.close();
    },
    { scope: 'worker' },
  ],

  chromium: async ({ rig }, use, testInfo) => {
    requireHost();
    const launched = await launchChromium({ env: rig.clientEnv });
    try {
      await use(launched);
    } finally {
      const closedByItself = launched.closedByItself();
      await launched.close();
      if (testInfo.status !== testInfo.expectedStatus) {
        await testInfo.attach('rig logs', { body: rig.logs(), contentType: 'text/plain' });
        // Whether the browser closed under the test (its own exit, a crash, a signal) or the test ended
        // it (a timeout): the error alone reads "Target page, context or browser has been closed" for
        // both. DEBUG=pw:browser prints its stderr and exit status.
        const how = closedByItself
          ? `Chromium went away under the test at ${closedByItself.toISOString()}, not closed by it`
          : 'Chromium was up until the test closed it';
        await testInfo.attach('chromium', { body: how, contentType: 'text/plain' });
      }
    }
  },

  context: async ({ chromium }, use) => {
    await use(chromium.context);
  },

  // biome-ignore lint/correctness/noEmptyPattern: Playwright reads a fixture's dependencies from this pattern
  extensionId: async ({}, use) => {
    await use(builtExtensionId());
  },

  serviceWorker: async ({ context, extensionId }, use) => {
    await use(await extensionServiceWorker(context, extensionId));
  },

  ext: async ({ serviceWorker }, use) => {
    await use(new ExtensionWorker(serviceWorker));
  },

  browserPid: async ({ chromium }, use) => {
    await use(await chromium.browserPid());
  },

  openMeeting: async ({ context, pages }, use) => {
    const opened: MeetingPage[] = [];
    await use(async (opts = {}) => {
      const q = new URLSearchParams();
      if (opts.playout) q.set('playout', '1');
      if (opts.constraints) q.set('constraints', JSON.stringify(opts.constraints));
      const qs = q.toString();
      const m = await MeetingPage.open(context, pages.url(`meeting.html${qs ? `?${qs}` : ''}`));
      opened.push(m);
      await m.ready();
      return m;
    });
    for (const m of opened) await m.close().catch(() => {});
  },

  meetingPage: async ({ openMeeting }, use) => {
    await use(await openMeeting());
  },
});

export { expect } from '@playwright/test';
