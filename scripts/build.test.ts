import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { test } from 'node:test';
import { inflateSync } from 'node:zlib';
import { SITE_SETTINGS_EXTENSION_ID } from '../e2e/rig/site-settings.ts';
import { buildManifest, chromeIdFromKey, deepMerge, encodePng } from './build.mjs';

test('deepMerge: objects merge, arrays and scalars replace, null deletes', () => {
  const cases: [unknown, unknown, unknown][] = [
    [{ a: 1 }, { b: 2 }, { a: 1, b: 2 }],
    [{ a: { x: 1, y: 1 } }, { a: { y: 2 } }, { a: { x: 1, y: 2 } }],
    [{ a: [1, 2] }, { a: [3] }, { a: [3] }],
    [{ a: 1, b: 2 }, { b: null }, { a: 1 }],
    [{ a: { x: 1 } }, { a: 'flat' }, { a: 'flat' }],
  ];
  for (const [base, overlay, want] of cases) assert.deepEqual(deepMerge(base, overlay), want);
});

test('chrome id derived from the key in manifests/chrome.json', () => {
  const { key } = JSON.parse(readFileSync(new URL('../manifests/chrome.json', import.meta.url), 'utf8'));
  assert.equal(chromeIdFromKey(key), 'ipgdconbmedmelnlpalblnicflhpfkim');
});

test("the e2e site-settings tool's id is Chromium's for its manifest's key", () => {
  const { key } = JSON.parse(readFileSync('e2e/rig/site-settings-ext/manifest.json', 'utf8')) as {
    key: string;
  };
  assert.equal(SITE_SETTINGS_EXTENSION_ID, chromeIdFromKey(key));
});

test('manifests: chrome has a service worker and the key, firefox background scripts and a gecko id', () => {
  const chrome = buildManifest('chrome');
  const firefox = buildManifest('firefox');
  assert.equal(chrome.manifest_version, 3);
  assert.equal(chrome.background.service_worker, 'background.js');
  assert.ok(chrome.key);
  assert.deepEqual(firefox.background.scripts, ['background.js']);
  assert.equal(firefox.browser_specific_settings.gecko.id, 'micoff@micoff.org');
  assert.equal(firefox.key, undefined);
  for (const m of [chrome, firefox]) {
    assert.ok(m.permissions.includes('nativeMessaging'));
    const page = m.content_scripts.find((c: { js: string[] }) => c.js.includes('page.js'));
    assert.deepEqual([page.world, page.run_at, page.all_frames], ['MAIN', 'document_start', true]);
  }
});

test('encodePng: valid signature, IHDR and pixel data', () => {
  const px = Buffer.alloc(2 * 2 * 4, 0xff);
  const png = encodePng(2, px);
  assert.deepEqual([...png.subarray(0, 8)], [0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  assert.equal(png.toString('ascii', 12, 16), 'IHDR');
  assert.equal(png.readUInt32BE(16), 2);
  const idatLen = png.readUInt32BE(33);
  assert.equal(png.toString('ascii', 37, 41), 'IDAT');
  assert.equal(inflateSync(png.subarray(41, 41 + idatLen)).length, 2 * (1 + 2 * 4));
});
