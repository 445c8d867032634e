import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ExtensionSelf, type SenderLike, uiPagesOf, uiSenderRefusal } from './ui-sender.ts';

const ID = 'ipgdconbmedmelnlpalblnicflhpfkim';
const own: ExtensionSelf = {
  id: ID,
  baseUrl: `chrome-extension://${ID}/`,
  pages: ['popup.html', 'options.html'],
};

test('uiPagesOf reads the popup and options pages from the manifest', () => {
  assert.deepEqual(
    uiPagesOf({ action: { default_popup: 'popup.html' }, options_ui: { page: '/options.html' } }),
    ['popup.html', 'options.html'],
  );
  assert.deepEqual(uiPagesOf({}), []);
});

test('uiSenderRefusal: our popup and options pages only', () => {
  const accepted: SenderLike[] = [
    // The action popup: no tab.
    { id: ID, url: `chrome-extension://${ID}/popup.html`, origin: `chrome-extension://${ID}`, frameId: 0 },
    // popup.html opened as a page (tests pin a tab with ?tab=): a tab, but our URL.
    { id: ID, url: `chrome-extension://${ID}/popup.html?tab=4`, tab: { id: 9 }, frameId: 0 },
    { id: ID, url: `chrome-extension://${ID}/options.html`, tab: { id: 9 } },
    // Firefox: no origin field.
    { id: ID, url: `chrome-extension://${ID}/popup.html` },
  ];
  for (const s of accepted) assert.equal(uiSenderRefusal(s, own), null, JSON.stringify(s));
  const refused: [SenderLike | undefined, RegExp][] = [
    [undefined, /no sender/],
    // A content script: our id, but the web page's URL, origin and tab.
    [
      { id: ID, url: 'https://evil.example/', origin: 'https://evil.example', tab: { id: 3 }, frameId: 0 },
      /not an extension page/,
    ],
    // The same with a URL that starts like ours but another origin claimed.
    [{ id: ID, url: `chrome-extension://${ID}/popup.html`, origin: 'https://evil.example' }, /origin/],
    [{ id: 'other', url: `chrome-extension://other/popup.html` }, /another extension/],
    [{ id: ID, url: `chrome-extension://${ID}/background.js` }, /not a UI page/],
    [{ id: ID, url: `chrome-extension://${ID.slice(0, -1)}x/popup.html` }, /not an extension page/],
    [{ id: ID, url: `chrome-extension://${ID}/popup.html`, frameId: 2 }, /subframe/],
  ];
  for (const [s, why] of refused) assert.match(uiSenderRefusal(s, own) ?? 'accepted', why, JSON.stringify(s));
});
