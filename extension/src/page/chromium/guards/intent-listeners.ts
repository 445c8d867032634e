// Where page/chromium/guards/intent.ts hears the user: capture-phase, passive listeners on the window (they run before
// the page's own, see nothing the page could stop, and never delay an event), and the document's
// visibility. Each signal is handed to `signal`; nothing else is done with the events.

import type { Originals, PageInput } from '../../common/originals.ts';
import type { Intent, IntentKind } from './intent.ts';

export function listenForIntent(
  o: Originals,
  page: PageInput,
  intent: Intent,
  signal: (kind: IntentKind) => void,
): void {
  const opts = { capture: true, passive: true };
  const on = (target: EventTarget, type: string, cb: (e: Event) => void) =>
    o.addEventListener.call(
      target,
      type,
      (e: Event) => {
        try {
          cb(e);
        } catch {} // hostile territory: our bookkeeping never breaks the page's event
      },
      opts,
    );
  const raise = (kind: IntentKind | null) => {
    if (kind) signal(kind);
  };
  on(page.window, 'pointerdown', (e) => raise(intent.pointer('down', { path: page.path(e) })));
  on(page.window, 'pointerover', (e) => raise(intent.pointer('over', { path: page.path(e) })));
  on(page.window, 'keydown', (e) => {
    const k = page.key(e);
    if (k) raise(intent.key(k));
  });
  on(page.document, 'visibilitychange', () => raise(intent.visibility(page.visible())));
}
