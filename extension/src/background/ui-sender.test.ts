import assert from 'node:assert/strict';
import { test } from 'node:test';
import { type ExtensionSelf, type SenderLike, uiPagesOf, uiSenderRefusal } from './ui-sender.ts';

const ID = 'ipgdconbmedmelnlpalblnicflhpfkim';
const own: ExtensionSelf = {
  id: ID,
  baseUrl: `chrome-extension://${ID}/`,
  pages: ['popup.html', 'options.html'],
};

test('uiPagesOf reads the popup and options pages from the manifest (Chrome: as written, Firefox: resolved)', () => {
  assert.deepEqual(
    uiPagesOf(
      { action: { default_popup: 'popup.html' }, options_ui: { page: '/options.html' } },
      own.baseUrl,
    ),
    ['popup.html', 'options.html'],
  );
  const ff = 'moz-extension://6d1f0c2e-9a57-4b8e-8f43-0c1de0f0a11c/';
  assert.deepEqual(
    uiPagesOf(
      { action: { default_popup: `${ff}popup.html` }, options_ui: { page: `${ff}options.html` } },
      ff,
    ),
    ['popup.html', 'options.html'],
  );
  assert.deepEqual(uiPagesOf({}, own.baseUrl), []);
});

test('uiSenderRefusal: our popup and options pages only', () => {
  const accepted: SenderLike[] = [
    // The action popup: no tab.
    { id: ID, url: `chrome-extension://${ID}/popup.html`, origin: `chrome-extension://${ID}`, frameId: 0 },
    // popup.html opened as a page (tests pin a tab with ?tab=): a tab, but our URL.
    { id: ID, url: `chrome-extension://${ID}/popup.html?tab=4`, tab: { id: 9 }, frameId: 0 },
    { id: ID, url: `chrome-extension://${ID}/options.html`, tab: { id: 9 } },
    // No origin field.
    { id: ID, url: `chrome-extension://${ID}/popup.html` },
  ];
  for (const s of accepted) assert.equal(uiSenderRefusal(s, own), null, JSON.stringify(s));
  // Firefox (what it passes, measured): popup.html opened in a tab.
  const ff = 'moz-extension://6d1f0c2e-9a57-4b8e-8f43-0c1de0f0a11c/';
  const ffOwn = { id: 'micoff@micoff.org', baseUrl: ff, pages: ['popup.html', 'options.html'] };
  const ffPopup: SenderLike = {
    id: 'micoff@micoff.org',
    url: `${ff}popup.html`,
    origin: ff.slice(0, -1),
    tab: { id: 3 },
    frameId: 0,
  };
  assert.equal(uiSenderRefusal(ffPopup, ffOwn), null);
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
