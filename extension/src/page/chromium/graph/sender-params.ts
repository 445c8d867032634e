// A sender's RTP parameters as the page sees them, while micoff reads them (does the sender send?) and
// restarts the sender's RTP stream after a release: every encoding inactive, then back as the page set
// them (docs/design/release-on-mute.md "The far end's jitter buffer after a release"). setParameters
// must carry the transactionId of the LAST getParameters, so a sender micoff read since the page's get
// is `stale` and the page's set gets a fresh one. No DOM: patch/rtc.ts passes the originals in.

/** The parts of RTCRtpSendParameters used here. */
export interface Params {
  transactionId: string;
  encodings: { active?: boolean }[];
}

export interface ParamsApi<S, P extends Params> {
  get(sender: S): P;
  set(sender: S, p: P): Promise<void>;
}

export function createSenderParams<S extends object, P extends Params>(api: ParamsApi<S, P>) {
  /** The encodings' `active` as the page set them, while micoff restarts the sender. */
  const restoring = new Map<S, boolean[]>();
  const restarts = new Map<S, Promise<void>>();
  const pageTxn = new WeakMap<S, string>();
  const stale = new WeakSet<S>();

  /** micoff's own read. */
  function read(sender: S): P {
    const p = api.get(sender);
    stale.add(sender);
    return p;
  }

  /** Each encoding's `active` as the page set it. */
  function active(sender: S): boolean[] {
    return restoring.get(sender) ?? (read(sender).encodings ?? []).map((e) => e.active !== false);
  }

  /** Stop and start the sender's RTP stream; resolves once it is back as the page set it (or could not
   * be stopped: a closed connection). A sender that sends nothing is left alone (WebRTC restarts it
   * itself when the page resumes it). Concurrent calls share one restart. */
  function restart(sender: S): Promise<void> {
    const running = restarts.get(sender);
    if (running) return running;
    const apply = (on: (i: number) => boolean) => {
      const p = read(sender);
      p.encodings.forEach((e, i) => {
        e.active = on(i);
      });
      return api.set(sender, p);
    };
    const run = (async () => {
      const page = (read(sender).encodings ?? []).map((e) => e.active !== false);
      if (!page.some(Boolean)) return;
      restoring.set(sender, page);
      try {
        await apply(() => false);
      } catch {
        return; // nothing changed
      }
      // Back to what the page wants (it may have set parameters meanwhile: `restoring` has its latest).
      for (let attempt = 0; attempt < 3; attempt++) {
        try {
          await apply((i) => restoring.get(sender)?.[i] ?? true);
          return;
        } catch {}
      }
    })().finally(() => {
      restoring.delete(sender);
      restarts.delete(sender);
    });
    restarts.set(sender, run);
    return run;
  }

  /** The page's getParameters: the original's result, `active` as the page set it during a restart. */
  function pageGet(sender: S): P {
    const p = api.get(sender);
    pageTxn.set(sender, p.transactionId);
    stale.delete(sender);
    const page = restoring.get(sender);
    if (page) {
      p.encodings.forEach((e, i) => {
        e.active = page[i] ?? e.active;
      });
    }
    return p;
  }

  /** What the page's setParameters(p) passes to the original: p, with a fresh transactionId when micoff
   * read the sender since the page's get. A restart in progress restores what the page sets. */
  function pageSet(sender: S, p: P): P {
    if (!p || typeof p !== 'object') return p;
    if (restoring.has(sender) && Array.isArray(p.encodings)) {
      restoring.set(
        sender,
        p.encodings.map((e) => e?.active !== false),
      );
    }
    let out = p;
    if (stale.has(sender) && p.transactionId === pageTxn.get(sender)) {
      out = { ...p, transactionId: read(sender).transactionId };
    }
    pageTxn.delete(sender);
    return out;
  }

  return { read, active, restart, pageGet, pageSet };
}
