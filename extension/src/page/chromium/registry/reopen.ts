// How a released device is opened again (the registry's default `open`): the original getUserMedia with
// the page's own constraints, only while the page holds the microphone permission, and within
// REOPEN_DEADLINE_MS. A reopen that cannot succeed is refused (no permission: without asking the
// browser), so the group machine ends the page's tracks as on an unplugged device and the meeting asks
// again where the user sees it: never a silent unmute (docs/design/release-on-mute.md).
import { ENDED } from '../../../shared/release-decision.ts';
import type { Originals } from '../../common/originals.ts';
import type { Root } from './members.ts';

/** The longest a reopen may take before the page's tracks end (a reopen takes tens of ms here). */
export const REOPEN_DEADLINE_MS = 5000;

/** A reopen micoff gave up on, with what the page's report says (ENDED). */
export class ReopenRefused extends Error {
  constructor(readonly why: string) {
    super(why);
    this.name = 'ReopenRefused';
  }
}

/** Why a reopen failed, in the report's words. */
export function refusalReason(error: unknown): string {
  if (error instanceof ReopenRefused) return error.why;
  const name = (error as { name?: unknown } | null)?.name;
  if (name === 'NotAllowedError' || name === 'SecurityError') return ENDED.permission;
  if (name === 'NotFoundError' || name === 'OverconstrainedError') return ENDED.gone;
  return ENDED.refused;
}

/** `permission` reads the page's microphone permission now (page/chromium/guards/permission-watch.ts; null: unknown,
 * which does not stop the reopen). */
export function createOpen(
  o: Originals,
  permission: () => PermissionState | null,
  deadlineMs = REOPEN_DEADLINE_MS,
): (root: Root) => Promise<MediaStream> {
  return async (root) => {
    const state = permission();
    if (state === 'prompt' || state === 'denied') throw new ReopenRefused(ENDED.permission);
    const opening = o.getUserMedia.call(o.mediaDevices, { audio: root.constraints });
    let timer: number | null = null;
    let late = false;
    const deadline = new Promise<never>((_, reject) => {
      timer = o.setTimeout(() => {
        late = true;
        reject(new ReopenRefused(ENDED.timeout));
      }, deadlineMs);
    });
    try {
      return await Promise.race([opening, deadline]);
    } finally {
      if (timer !== null) o.clearTimeout(timer);
      // A stream that arrives after the deadline belongs to nobody: stop it.
      if (late) {
        opening.then(
          (s) => {
            for (const t of o.getTracks.call(s)) o.stop.call(t);
          },
          () => {},
        );
      }
    }
  };
}
