// What popup-states*.spec.ts share: where each state's screenshot goes, the internal names the popup's
// default view must not show, and the need for a machine where no system-wide micoff-host answers (the
// "no host" state).
import { existsSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { PACKAGED_MANIFESTS } from '../rig/deb.ts';
import { ARTIFACTS_DIR } from '../rig/paths.ts';

/** A popup as wide as the toolbar's (popup.css), tall enough for the default view. */
export const POPUP_VIEWPORT = { width: 400, height: 760 } as const;

/** e2e/artifacts/popup-states/<browser>-<state>.png (the folder made on the way). */
export function popupShotPath(browser: 'chromium' | 'firefox', state: string): string {
  const dir = join(ARTIFACTS_DIR, 'popup-states');
  mkdirSync(dir, { recursive: true });
  return join(dir, `${browser}-${state}.png`);
}

/** Names of the machinery, not of anything a user knows: the power meter's kernel name and folder, the
 * audio server's buffer, its word for paused, a stream or source by its number (a cell that is only
 * "#<n>"; a thread's own name such as "WebrtcWorker #1" is Linux's and stays). */
export const INTERNAL_NAMES = /\bRAPL\b|powercap|buf ms|\bcorked\b|\bsource \d|\bstream \d|^#\d+$/i;

/** The visible text's internal names (none expected), cell by cell; `text`: the page's `innerText`
 * (what is rendered: not a closed <details>, not a tooltip; a table's cells tab-separated). */
export function internalNamesIn(text: string): string[] {
  return text
    .split('\n')
    .flatMap((line) => line.split('\t'))
    .map((cell) => cell.trim())
    .filter((cell) => INTERNAL_NAMES.test(cell));
}

/** Why the "no host" state cannot be shown here: a system-wide manifest of the package would answer. */
export function systemHostPresent(browser: 'chromium' | 'firefox'): string | null {
  const manifest = PACKAGED_MANIFESTS[browser];
  return existsSync(manifest)
    ? `${manifest} exists (the micoff-host package): the browser would find micoff-host there, so "no host" cannot be shown`
    : null;
}
