// Issue 15 items 1-3: what a web page (and code in a web page's renderer) can get out of micoff.
// The attacks run for real on Chromium: page scripts forging the page <-> content events, and the
// content script's own isolated world (reached through the DevTools protocol, standing in for a
// compromised or confused content script) opening the popup's port. Design and results:
// docs/design/security-h15-ext.md.
import type { Page } from '@playwright/test';
import { POPUP_PORT } from '../../extension/src/shared/messages.ts';
import { expect, test } from '../rig/fixtures.ts';
import { waitFor } from '../rig/proc.ts';

/** Evaluates `expression` in micoff's content-script world (the isolated world named after the
 * extension) of the page's top frame, through the DevTools protocol. */
async function inContentScriptWorld<T>(page: Page, expression: string): Promise<T> {
  const cdp = await page.context().newCDPSession(page);
  const worlds: { id: number; name: string; auxData?: { type?: string; frameId?: string } }[] = [];
  cdp.on('Runtime.executionContextCreated', (e) => worlds.push(e.context));
  await cdp.send('Runtime.enable');
  const { frameTree } = await cdp.send('Page.getFrameTree');
  const world = await waitFor('micoff content-script world', async () =>
    worlds.find(
      (w) =>
        w.name === 'micoff' && w.auxData?.type === 'isolated' && w.auxData.frameId === frameTree.frame.id,
    ),
  );
  const r = await cdp.send('Runtime.evaluate', {
    expression,
    contextId: world.id,
    awaitPromise: true,
    returnByValue: true,
  });
  await cdp.detach();
  if (r.exceptionDetails)
    throw new Error(`in the content-script world: ${JSON.stringify(r.exceptionDetails)}`);
  return r.result.value as T;
}

test('item 3: a content-script context opening the popup port is refused (told nothing, runs nothing)', async ({
  ext,
  serviceWorker,
  pages,
  context,
}) => {
  await ext.waitHostConnected();
  const page = await context.newPage();
  await page.goto(pages.url('index.html'));
  const seen = await inContentScriptWorld<{ disconnected: boolean; got: string[] }>(
    page,
    `new Promise((resolve) => {
      const got = [];
      const port = chrome.runtime.connect({ name: ${JSON.stringify(POPUP_PORT)} });
      port.onMessage.addListener((m) => got.push(m.type));
      port.onDisconnect.addListener(() => resolve({ disconnected: true, got }));
      port.postMessage({ type: 'popup_hello', tab_id: 1 });
      port.postMessage({ type: 'run_doctor' });
      setTimeout(() => resolve({ disconnected: false, got }), 3000);
    })`,
  );
  expect(seen).toEqual({ disconnected: true, got: [] });
  // The background holds no popup for it (so no CPU subscription at the host either).
  expect(
    await serviceWorker.evaluate(() =>
      (globalThis as unknown as { micoff: { popups: { count(): number } } }).micoff.popups.count(),
    ),
  ).toBe(0);

  // Control: our own popup page, on the same port name, is answered.
  const popup = await context.newPage();
  await popup.goto(`chrome-extension://${await serviceWorker.evaluate(() => chrome.runtime.id)}/popup.html`);
  await expect(popup.locator('#host-pill')).toHaveText(/^host \d+\.\d+\.\d+/);
});
