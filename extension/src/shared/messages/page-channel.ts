// The channel between the page world (page.js) and the content script (content.js) of one frame, which
// the page's own scripts can neither forge nor read: strings in CustomEvents on the window, under an
// event NAME carrying a per-frame secret handed over before any page script runs
// (docs/design/security.md). content.js offers the secret, cancelable; page.js takes the first offer and
// cancels it, so content.js knows at once that a page world has it, and page.js stops listening. What
// page.js uses here is captured before page scripts run (ChannelNatives).

export const HANDSHAKE_EVENT = 'micoff:handshake';

/** The secret: 128 random bits, hex. */
export function newSecret(crypto: Pick<Crypto, 'getRandomValues'>): string {
  const bytes = crypto.getRandomValues(new Uint8Array(16));
  return Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
}

const SECRET = /^[0-9a-f]{32}$/;

/** The frame's two event names. */
export function channelEvents(secret: string): { toContent: string; toPage: string } {
  return { toContent: `micoff:${secret}:to-content`, toPage: `micoff:${secret}:to-page` };
}

export interface ChannelWindow {
  addEventListener(type: string, listener: (e: Event) => void): void;
  removeEventListener(type: string, listener: (e: Event) => void): void;
  dispatchEvent(e: Event): boolean;
}

/** The built-ins the channel calls, captured (bound) before page scripts run. */
export interface ChannelNatives {
  listen(type: string, listener: (e: Event) => void): void;
  unlisten(type: string, listener: (e: Event) => void): void;
  dispatch(e: Event): boolean;
  event(type: string, detail: string, cancelable: boolean): Event;
  detailOf(e: Event): unknown;
  preventDefault(e: Event): void;
}

/** Captures what the channel needs from `w` (call at document_start, before page scripts). */
export function captureNatives(w: ChannelWindow & { CustomEvent: typeof CustomEvent }): ChannelNatives {
  const Ctor = w.CustomEvent;
  const detail = Object.getOwnPropertyDescriptor(Ctor.prototype, 'detail')?.get;
  const prevent = Ctor.prototype.preventDefault;
  const call = Function.prototype.call.bind(Function.prototype.call) as <R>(
    f: (...a: unknown[]) => R,
    self: unknown,
    ...args: unknown[]
  ) => R;
  if (!detail) throw new Error('CustomEvent.prototype.detail has no getter');
  return {
    listen: w.addEventListener.bind(w),
    unlisten: w.removeEventListener.bind(w),
    dispatch: w.dispatchEvent.bind(w),
    event: (type, d, cancelable) => new Ctor(type, { detail: d, cancelable }),
    detailOf: (e) => call(detail as () => unknown, e),
    preventDefault: (e) => call(prevent as () => void, e),
  };
}

export interface ChannelEnd {
  send(text: string): void;
  /** Messages that arrived before the first listener are handed to it. */
  onMessage(listener: (text: string) => void): void;
}

const MAX_QUEUED = 64;

function endOf(n: ChannelNatives, inbound: string, outbound: string): ChannelEnd & { close(): void } {
  const listeners: ((text: string) => void)[] = [];
  const early: string[] = [];
  const onEvent = (e: Event) => {
    const d = n.detailOf(e);
    if (typeof d !== 'string') return;
    if (listeners.length === 0) {
      if (early.length < MAX_QUEUED) early.push(d);
      return;
    }
    for (const l of listeners) l(d);
  };
  n.listen(inbound, onEvent);
  return {
    send: (text) => n.dispatch(n.event(outbound, text, false)),
    onMessage(l) {
      listeners.push(l);
      for (const t of early.splice(0)) l(t);
    },
    close: () => n.unlisten(inbound, onEvent),
  };
}

/** Content side, at document_start: offers a fresh secret. Null when no page world took it (then the
 * content script has no channel and hears nothing from the page). */
export function offerChannel(n: ChannelNatives, secret: string): ChannelEnd | null {
  if (!SECRET.test(secret)) throw new Error('bad channel secret');
  const names = channelEvents(secret);
  const end = endOf(n, names.toContent, names.toPage); // listening before the page world can send
  const taken = !n.dispatch(n.event(HANDSHAKE_EVENT, secret, true));
  if (taken) return end;
  end.close();
  return null;
}

/** Page side, at document_start, before content.js runs: the end is usable at once; what it sends
 * before the content script's offer arrives is queued and flushed on the handover. */
export function awaitChannel(n: ChannelNatives): ChannelEnd & { ready(): boolean } {
  let end: ChannelEnd | null = null;
  const queued: string[] = [];
  const listeners: ((text: string) => void)[] = [];
  const onOffer = (e: Event) => {
    const secret = n.detailOf(e);
    if (end || typeof secret !== 'string' || !SECRET.test(secret)) return;
    n.preventDefault(e); // tells content.js, synchronously, that the page world has the secret
    n.unlisten(HANDSHAKE_EVENT, onOffer);
    const names = channelEvents(secret);
    end = endOf(n, names.toPage, names.toContent);
    for (const l of listeners) end.onMessage(l);
    for (const t of queued.splice(0)) end.send(t);
  };
  n.listen(HANDSHAKE_EVENT, onOffer);
  return {
    send(text) {
      if (end) end.send(text);
      else if (queued.length < MAX_QUEUED) queued.push(text);
    },
    onMessage(l) {
      listeners.push(l);
      end?.onMessage(l);
    },
    ready: () => end !== null,
  };
}
