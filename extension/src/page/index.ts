// MAIN-world content script (page.js): document_start, every frame (about:blank and srcdoc included).
// Chromium: installs the getUserMedia interposition (interpose.ts) before page scripts run. Same-origin
// child frames a script reaches through iframe.contentWindow/contentDocument before their own page.js
// ran are patched from here and report through this frame's bridge. Firefox: watches the mute
// (mute-observer.ts); Firefox's own pref releases the device, micoff checks that it does, and takes the
// muted call's senders off the wire (firefox/quiet.ts). Hostile territory: keep it small.

import { install } from './chromium/interpose.ts';
import { createBridge } from './common/bridge.ts';
import { observeMutes } from './firefox/mute-observer.ts';
import { quietSenders } from './firefox/quiet.ts';

type Realm = Window & typeof globalThis;

function main(): void {
  const top = self as unknown as Realm;
  if (typeof top.navigator?.mediaDevices === 'undefined' && typeof top.MediaDevices === 'undefined') return;
  const bridge = createBridge(top);
  // Firefox releases natively (media.getusermedia.microphone.off_while_disabled.enabled, a pref
  // `micoff-host install --firefox-release` sets); the interposition is written and tested against
  // Chromium only.
  // One branch per build: the bundler drops the other (and what only it imports).
  if (__BROWSER__ === 'firefox') {
    observeMutes(top, bridge, (watch) => quietSenders(top, watch, bridge));
  } else {
    let nextRealm = 1;
    const onChildRealm = (child: Realm): void => {
      install(child, { bridge, realm: nextRealm++, onChildRealm });
    };
    install(top, { bridge, realm: 0, onChildRealm });
  }
}

try {
  main();
} catch {
  // Never break the page.
}
