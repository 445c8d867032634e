// A site's microphone setting in Chromium's real content settings, through a test-only extension
// (site-settings-ext/, loaded beside micoff with LaunchOptions.extraExtensions; its page does the calls). DevTools permission
// overrides (Browser.setPermission) are no stand-in here: under an override Chromium answers a
// request at once instead of queueing a prompt, so a hidden tab's getUserMedia never waits the way it
// does when a grant has really gone (a one-time grant expired, the user took it back).
import { join } from 'node:path';
import type { BrowserContext } from '@playwright/test';
import { type LaunchedChromium, launchChromium } from './chromium.ts';
import { ROOT } from './paths.ts';
import { startXvfb, type Xvfb } from './xvfb.ts';

export const SITE_SETTINGS_EXT = join(ROOT, 'e2e', 'rig', 'site-settings-ext');

export type MicSetting = 'allow' | 'block' | 'ask';

/** A headful Chromium on an Xvfb display of its own, with real focus and Chromium's real permission
 * layer, and this tool beside micoff: a site's grant behaves as in a person's browser. The caller
 * closes `b`, then stops `x`. */
export async function launchWithSiteSettings(
  env: NodeJS.ProcessEnv,
): Promise<{ x: Xvfb; b: LaunchedChromium }> {
  const x = await startXvfb();
  try {
    const b = await launchChromium({
      env,
      display: x.display,
      realFocus: true,
      realPermissions: true,
      extraExtensions: [SITE_SETTINGS_EXT],
    });
    return { x, b };
  } catch (e) {
    await x.stop();
    throw e;
  }
}

export interface SiteSettings {
  set(origin: string, setting: MicSetting): Promise<void>;
  get(origin: string): Promise<MicSetting>;
}

/** The tool's id: Chromium's id for the fixed `key` of its manifest (scripts/build.test.ts checks it
 * against the derivation micoff's build uses). */
export const SITE_SETTINGS_EXTENSION_ID = 'npdplbaphoebkbglmnlggojaialelgim';

/** Opens the tool's page (a tab of its own) and drives the content settings from there. */
export async function siteSettings(context: BrowserContext): Promise<SiteSettings> {
  const page = await context.newPage();
  await page.goto(`chrome-extension://${SITE_SETTINGS_EXTENSION_ID}/page.html`);
  return {
    async set(origin, setting) {
      await page.evaluate(
        ([p, s]) =>
          (window as unknown as { setMicrophone(p: string, s: string): Promise<void> }).setMicrophone(p, s),
        [`${origin}/*`, setting] as const,
      );
    },
    async get(origin) {
      return (await page.evaluate(
        (u) => (window as unknown as { getMicrophone(u: string): Promise<string> }).getMicrophone(u),
        `${origin}/`,
      )) as MicSetting;
    },
  };
}
