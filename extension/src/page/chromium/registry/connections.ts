// The page's peer connections as far as the far end goes: what it plays right now (echo-guard.ts
// reads the loudest received audio source). Recorded by patch/rtc.ts as the page uses them; a closed
// connection is forgotten. A received source that is one of the page's own outbound streams (a page
// that loops its microphone back to itself, as test and "check your microphone" pages do) is not the
// far end: `refreshOwn` reads the page's outbound SSRCs (getStats) when a guard begins.

import type { Originals } from '../../common/originals.ts';
import { loudest } from '../guards/echo-guard.ts';

export function createConnections(o: Originals) {
  const pcs = new Set<RTCPeerConnection>();
  const own = new Set<number>();
  return {
    /** Read the SSRCs the page itself sends (once per guard; settles when every connection answered). */
    async refreshOwn(): Promise<void> {
      const { getStats } = o;
      if (!getStats) return;
      await Promise.all(
        [...pcs].map(async (pc) => {
          try {
            for (const r of (await getStats.call(pc)).values() as Iterable<{
              type?: string;
              ssrc?: number;
            }>) {
              if (r.type === 'outbound-rtp' && typeof r.ssrc === 'number') own.add(r.ssrc);
            }
          } catch {}
        }),
      );
    },
    add(pc: RTCPeerConnection): void {
      pcs.add(pc);
    },
    /** The loudest audio source the page receives now (0..1; 0 when none plays or none can be read). */
    farEndLevel(): number {
      const { getReceivers, receiverTrack, syncSources, connectionState } = o;
      if (!getReceivers || !receiverTrack || !syncSources) return 0;
      const now = o.dateNow();
      let level = 0;
      for (const pc of pcs) {
        try {
          if (connectionState?.call(pc) === 'closed') {
            pcs.delete(pc);
            continue;
          }
          for (const r of getReceivers.call(pc)) {
            if (o.kind.call(receiverTrack.call(r)) !== 'audio') continue;
            const far = syncSources.call(r).filter((src) => !own.has(src.source));
            level = Math.max(level, loudest(far, now));
          }
        } catch {}
      }
      return level;
    },
    size: () => pcs.size,
  };
}
