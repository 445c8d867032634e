// A private X server (Xvfb) for the few e2e specs that need a headful Chromium: in headless mode every
// page reports itself visible and focused, so a background tab or an unfocused window cannot be made.
// The display number is the first free one from :90 (its lock file and socket absent); the server is
// this rig's child, stopped by its PID.
import { existsSync, mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { assertAlive, type Child, startChild, stopChild, waitFor, which } from './proc.ts';

export interface Xvfb {
  /** The DISPLAY value, e.g. `:90`. */
  display: string;
  stop(): Promise<void>;
}

/** Xvfb's path (MICOFF_XVFB, else the one in PATH), or null when it is not installed
 * (scripts/ensure-deps.sh installs it for npm test). */
export const XVFB = process.env.MICOFF_XVFB ?? which('Xvfb');

/** Why Xvfb cannot be started here, or null (for `need`, e2e/rig/needs.ts). */
export function xvfbMissing(): string | null {
  return XVFB && existsSync(XVFB)
    ? null
    : `Xvfb is not installed${XVFB ? ` at ${XVFB}` : ''} (apt-get install xvfb; npm test installs it)`;
}

export async function startXvfb(): Promise<Xvfb> {
  const missing = xvfbMissing();
  if (missing || !XVFB) throw new Error(missing ?? 'Xvfb is not installed');
  const taken = (n: number) => existsSync(`/tmp/.X${n}-lock`) || existsSync(`/tmp/.X11-unix/X${n}`);
  let n = 90;
  while (taken(n)) n++;
  const dir = mkdtempSync(join(tmpdir(), 'micoff-xvfb-'));
  const child: Child = startChild(
    'Xvfb',
    XVFB,
    [`:${n}`, '-screen', '0', '1280x800x24', '-nolisten', 'tcp', '-noreset'],
    join(dir, 'xvfb.log'),
  );
  await waitFor(`Xvfb :${n} to listen`, () => existsSync(`/tmp/.X11-unix/X${n}`), {
    timeoutMs: 10_000,
    check: () => assertAlive(child),
  });
  return { display: `:${n}`, stop: () => stopChild(child) };
}
