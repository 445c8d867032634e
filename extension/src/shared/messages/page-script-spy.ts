// For tests (page-channel.test.ts, e2e/tests/trust-boundary.spec.ts): what a page script that runs after
// document_start can do to see the page channel's traffic. Self-contained, so that Playwright can run
// it in a real page as source text.

/** Wraps the DOM's `dispatchEvent`, `addEventListener` and CustomEvent's `detail` so that each use is
 * noted in `seen`; returns the undo. */
export function spyOnEventBuiltins(seen: string[]): () => void {
  const proto = CustomEvent.prototype;
  const detail = Object.getOwnPropertyDescriptor(proto, 'detail');
  const { dispatchEvent, addEventListener } = EventTarget.prototype;
  Object.defineProperty(proto, 'detail', {
    configurable: true,
    get() {
      seen.push(`detail of ${(this as Event).type}`);
      return detail?.get?.call(this);
    },
  });
  EventTarget.prototype.dispatchEvent = function (e: Event) {
    seen.push(`dispatch ${e.type}`);
    return dispatchEvent.call(this, e);
  };
  EventTarget.prototype.addEventListener = function (
    this: EventTarget,
    ...a: Parameters<EventTarget['addEventListener']>
  ) {
    seen.push(`listen ${a[0]}`);
    return addEventListener.apply(this, a);
  };
  return () => {
    if (detail) Object.defineProperty(proto, 'detail', detail);
    EventTarget.prototype.dispatchEvent = dispatchEvent;
    EventTarget.prototype.addEventListener = addEventListener;
  };
}
