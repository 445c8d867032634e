// The page's peer connections as far as the far end goes: what it plays right now (echo-guard.ts
// reads the loudest received audio source). Recorded by patch/rtc.ts as the page uses them; a closed
// connection is forgotten.
import { loudest } from '../echo-guard.ts';
import type { Originals } from '../originals.ts';

export function createConnections(o: Originals) {
  const pcs = new Set<RTCPeerConnection>();
  return {
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
            level = Math.max(level, loudest(syncSources.call(r), now));
          }
        } catch {}
      }
      return level;
    },
    size: () => pcs.size,
  };
}
