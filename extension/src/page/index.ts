// MAIN-world content script (page.js): document_start, every frame (about:blank and srcdoc included).
// Installs the getUserMedia interposition (interpose.ts) before page scripts run. Same-origin child
// frames a script reaches through iframe.contentWindow/contentDocument before their own page.js ran are
// patched from here and report through this frame's bridge. Hostile territory: keep it small.
import { createBridge } from './bridge.ts';
import { install } from './interpose.ts';

type Realm = Window & typeof globalThis;

function main(): void {
  // Firefox releases natively (media.getusermedia.microphone.off_while_disabled.enabled, a pref a
  // policy can set); the interposition is written and tested against Chromium only.
  if (__BROWSER__ !== 'chrome') return;
  const top = self as unknown as Realm;
  if (typeof top.navigator?.mediaDevices === 'undefined' && typeof top.MediaDevices === 'undefined') return;
  const bridge = createBridge(top);
  let nextRealm = 1;
  const onChildRealm = (child: Realm): void => {
    install(child, { bridge, realm: nextRealm++, onChildRealm });
  };
  install(top, { bridge, realm: 0, onChildRealm });
}

try {
  main();
} catch {
  // Never break the page.
}
