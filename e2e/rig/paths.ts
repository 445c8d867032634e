// Where things are, relative to the repository root (this file lives in e2e/rig/).
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const PAGES_DIR = join(ROOT, 'e2e', 'pages');
export const ARTIFACTS_DIR = join(ROOT, 'e2e', 'artifacts');
export const EXTENSION_DIR = process.env.MICOFF_EXTENSION_DIR ?? join(ROOT, 'dist', 'chrome');
export const HOST_BINARY = process.env.MICOFF_HOST ?? join(ROOT, 'target', 'release', 'micoff-host');
export const FIREFOX_EXTENSION_DIR =
  process.env.MICOFF_FIREFOX_EXTENSION_DIR ?? join(ROOT, 'dist', 'firefox');
export const CHROMIUM = process.env.MICOFF_CHROMIUM ?? '/usr/bin/chromium';
export const FIREFOX = process.env.MICOFF_FIREFOX ?? '/usr/bin/firefox-esr';
/** A micoff-host .deb to test instead of the one packed from this checkout (rig/deb.ts). */
export const HOST_DEB = process.env.MICOFF_DEB;
/** The writer that feeds a rig's pipe source in real time (audio-rig.ts addClockedSource). */
export const PIPE_WRITER = join(ROOT, 'e2e', 'rig', 'pipe-writer.ts');
