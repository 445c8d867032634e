// The audio graph of one realm as audibility.ts reads it: each track as a vertex whose next vertices
// are what the patches recorded as its consumers (senders, nodes, elements, recorders, processors),
// plus the clones of derived tracks. `seen` remembers the tracks ever handed to a recorded consumer:
// one that has none now is silenced, one never seen used may be heard by code micoff cannot see.
import { KEPT } from '../../../shared/release-decision.ts';
import type { Originals, Track } from '../../common/originals.ts';
import { type Audibility, assess, type Vertex } from '../graph/audibility.ts';
import type { Group, Member } from './members.ts';

export type Graph = ReturnType<typeof createGraph>;

export function createGraph(o: Originals, members: WeakMap<Track, Member>) {
  // Where tracks go: each patch answers for the consumers it records.
  const consumerSources: ((t: Track) => Vertex[])[] = [];
  let clonesOf: (t: Track) => Track[] = () => [];
  const seen = new WeakSet<Track>();

  /** A track as a point of the audio graph: a member's page-visible track or a derived one (a
   * MediaStreamAudioDestinationNode's, a clone of one). An ended derived track carries nothing. */
  function trackVertex(t: Track): Vertex {
    const m = members.get(t);
    return {
      kind: 'track',
      key: t,
      enabled: m ? m.enabled && !m.ended : o.getEnabled.call(t) && !o.isEnded(t),
      get seen() {
        return seen.has(t);
      },
      unseen: m ? KEPT.clone : KEPT.unseen,
      clones: () => clonesOf(t).map(trackVertex),
      next() {
        const out: Vertex[] = [];
        for (const c of consumerSources) {
          try {
            out.push(...c(t));
          } catch {
            out.push({ kind: 'sink', why: KEPT.unseen }); // a consumer we cannot read: it may hear
          }
        }
        if (out.length > 0) seen.add(t);
        return out;
      },
    };
  }

  /** Where the group's paths start: its live members' page-visible tracks. */
  function roots(g: Group): Vertex[] {
    const out: Vertex[] = [];
    for (const m of g.members) if (!m.ended) out.push(trackVertex(m.page));
    return out;
  }

  return {
    trackVertex,
    roots,
    /** What hears the group's device; `follow` false is the plain rule (enabled tracks hear). */
    audibility(g: Group, follow: boolean): Audibility {
      return assess(roots(g), follow);
    },
    /** A patch's consumers of a (page-visible) track, as graph vertices (see audibility.ts). */
    addConsumers(c: (t: Track) => Vertex[]): void {
      consumerSources.push(c);
    },
    /** Where clones of derived tracks are recorded (managed clones are members of their group). */
    setClones(c: (t: Track) => Track[]): void {
      clonesOf = c;
    },
    /** Mark a track as handed to a consumer micoff records (its consumers are then known). */
    markSeen(t: Track): void {
      seen.add(t);
    },
  };
}
