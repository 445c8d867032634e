// Where an insertable-streams processor's frames go (patch/insertable/index.ts): the page wires a processor's
// readable to a generator's writable through page code micoff does not run, but the wiring itself goes
// through calls it sees: `pipeThrough` (readable -> the readable it returns), `pipeTo` (readable ->
// writable, until the pipe settles) and a `postMessage` that transfers readables and writables to a
// worker together (each readable -> each writable: the worker's transform connects them). Pure: the
// page supplies the objects, so the rule runs under `node --test`.

export interface Followed<T> {
  /** The terminals reached (e.g. the generators whose writables the frames end up in). */
  ends: T[];
  /** Some branch ends where micoff cannot see (a stream read or written by page code, or nothing). */
  open: boolean;
}

export interface StreamLinks {
  link(from: object, to: object): void;
  unlink(from: object, to: object): void;
  /** Every path from `start`: a stream that `terminal` names ends its branch there; a stream with no
   * links onward ends it in the unknown. Cycles end nowhere new. */
  follow<T>(start: object, terminal: (s: object) => T | null): Followed<T>;
}

export function createStreamLinks(): StreamLinks {
  // Several pipes can leave one stream (a readable piped, its pipe aborted, piped again): a count each.
  const out = new WeakMap<object, Map<object, number>>();
  return {
    link(from, to) {
      const m = out.get(from) ?? new Map<object, number>();
      m.set(to, (m.get(to) ?? 0) + 1);
      out.set(from, m);
    },
    unlink(from, to) {
      const m = out.get(from);
      const n = m?.get(to) ?? 0;
      if (n > 1) m?.set(to, n - 1);
      else m?.delete(to);
    },
    follow<T>(start: object, terminal: (s: object) => T | null): Followed<T> {
      const ends: T[] = [];
      let open = false;
      const seen = new Set<object>();
      const walk = (s: object): void => {
        if (seen.has(s)) return;
        seen.add(s);
        const end = terminal(s);
        if (end !== null) {
          if (!ends.includes(end)) ends.push(end);
          return;
        }
        const next = out.get(s);
        if (!next || next.size === 0) {
          open = true;
          return;
        }
        for (const n of next.keys()) walk(n);
      };
      walk(start);
      return { ends, open };
    },
  };
}
