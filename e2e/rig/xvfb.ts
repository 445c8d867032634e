// A private X server (Xvfb) for the few e2e specs that need a headful Chromium: in headless mode every
// page reports itself visible and focused, so a background tab or an unfocused window cannot be made.
// The display is the first free one this rig's server gets (startXvfb); the server is this rig's child,
// stopped by its PID.
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type Child, startChild, stopChild, waitFor, which } from './proc.ts';

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

/** The PID written in display `n`'s lock file, or null. */
function lockHolder(n: number): number | null {
  try {
    const pid = Number.parseInt(readFileSync(`/tmp/.X${n}-lock`, 'utf8').trim(), 10);
    return Number.isFinite(pid) ? pid : null;
  } catch {
    return null;
  }
}

/**
 * Starts Xvfb on the first display that is free and that it gets: from :90, ten apart per Playwright
 * worker (TEST_PARALLEL_INDEX), and on to the next one when another server took it first (its lock
 * file names another process, or ours exits). Two workers that pick the same number at once each end
 * up with their own display, never with the other's. `MICOFF_XVFB_FIRST` moves the start (a second
 * run on the same machine whose /tmp is private still shares the abstract X socket names).
 */
export async function startXvfb(): Promise<Xvfb> {
  const missing = xvfbMissing();
  if (missing || !XVFB) throw new Error(missing ?? 'Xvfb is not installed');
  const taken = (n: number) => existsSync(`/tmp/.X${n}-lock`) || existsSync(`/tmp/.X11-unix/X${n}`);
  const dir = mkdtempSync(join(tmpdir(), 'micoff-xvfb-'));
  const first =
    Number(process.env.MICOFF_XVFB_FIRST ?? 90) + 10 * Number(process.env.TEST_PARALLEL_INDEX ?? 0);
  for (let n = first; n < first + 50; n++) {
    if (taken(n)) continue;
    const child: Child = startChild(
      'Xvfb',
      XVFB,
      [`:${n}`, '-screen', '0', '1280x800x24', '-nolisten', 'tcp', '-noreset'],
      join(dir, `xvfb-${n}.log`),
    );
    const ours = await waitFor(
      `Xvfb :${n} to listen`,
      () => {
        if (child.exit) return 'lost';
        const holder = lockHolder(n);
        if (holder !== null && holder !== child.pid) return 'lost';
        return holder === child.pid && existsSync(`/tmp/.X11-unix/X${n}`) ? 'ours' : null;
      },
      { timeoutMs: 10_000 },
    );
    if (ours === 'ours') return { display: `:${n}`, stop: () => stopChild(child) };
    await stopChild(child);
  }
  throw new Error(`no free X display from :${first} to :${first + 49}`);
}
