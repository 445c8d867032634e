import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  createSettingsStore,
  DEFAULT_SETTINGS,
  followPathsFor,
  followPathsSitePatch,
  GRANT_KEEPALIVE_MAX_MS,
  keepSendingFor,
  keepSendingSitePatch,
  normalizeOrigin,
  parseGrantKeepalive,
  parseReleaseDelay,
  releaseAllowedForSource,
  releaseEnabledFor,
  SETTINGS_KEY,
  type StorageChangedLike,
  validateSettings,
} from './settings.ts';

test('parseReleaseDelay', () => {
  const cases: [unknown, number | null][] = [
    [0, 0],
    [3000, 3000],
    [10000, 10000],
    ['2500', 2500],
    [' 100 ', 100],
    [99.6, 100],
    [-1, null],
    [10001, null],
    ['', null],
    ['abc', null],
    [Number.NaN, null],
    [Number.POSITIVE_INFINITY, null],
    [null, null],
    [undefined, null],
  ];
  for (const [input, want] of cases) assert.equal(parseReleaseDelay(input), want, String(input));
});

test('parseGrantKeepalive: 5 s to the shipped 3 minutes, the default the longest', () => {
  const cases: [unknown, number | null][] = [
    [5000, 5000],
    [10_000.4, 10_000],
    [180_000, 180_000],
    [4999, null],
    [180_001, null],
    ['10000', null],
    [Number.NaN, null],
    [undefined, null],
  ];
  for (const [input, want] of cases) assert.equal(parseGrantKeepalive(input), want, String(input));
  assert.equal(DEFAULT_SETTINGS.grantKeepaliveMs, GRANT_KEEPALIVE_MAX_MS);
  assert.ok(
    GRANT_KEEPALIVE_MAX_MS + 60_000 < 300_000,
    'a minute of timer throttling still lands before 5 min',
  );
});

test('normalizeOrigin', () => {
  const cases: [string, string | null][] = [
    ['https://meet.example.com/abc?x=1', 'https://meet.example.com'],
    ['meet.example.com', 'https://meet.example.com'],
    ['HTTP://Example.COM:8080/x', 'http://example.com:8080'],
    ['http://127.0.0.1:5173/', 'http://127.0.0.1:5173'],
    ['  https://a.b  ', 'https://a.b'],
    ['file:///tmp/x.html', null],
    ['chrome-extension://abc/popup.html', null],
    ['', null],
    ['https://', null],
  ];
  for (const [input, want] of cases) assert.equal(normalizeOrigin(input), want, input);
});

test('validateSettings fills defaults and drops junk', () => {
  assert.deepEqual(validateSettings(undefined), DEFAULT_SETTINGS);
  assert.deepEqual(validateSettings('junk'), DEFAULT_SETTINGS);
  assert.deepEqual(
    validateSettings({
      releaseOnMute: false,
      releaseDelayMs: 20_000,
      bluetoothPolicy: 'release',
      siteOverrides: {
        'https://a.example/path': { release: false },
        'not a url with spaces': { release: true },
        'https://b.example': { release: 'yes' },
        'file:///x': { release: true },
      },
      followPaths: 'no',
      followPathsSites: { 'a.example': false, 'https://b.example': 'off', 'file:///x': true },
      keepSendingSites: { 'janus.example': true, 'https://b.example': 1, 'file:///x': false },
      grantKeepaliveMs: 1000,
      extra: 1,
    }),
    {
      releaseOnMute: false,
      releaseDelayMs: DEFAULT_SETTINGS.releaseDelayMs,
      bluetoothPolicy: 'release',
      siteOverrides: { 'https://a.example': { release: false } },
      followPaths: true,
      followPathsSites: { 'https://a.example': false },
      keepSendingSites: { 'https://janus.example': true },
      grantKeepaliveMs: DEFAULT_SETTINGS.grantKeepaliveMs,
    },
  );
  assert.equal(validateSettings({ bluetoothPolicy: 'maybe' }).bluetoothPolicy, 'keep-open');
});

test('followPathsFor: a site exception beats the global switch; the patch sets and clears one', () => {
  const s = validateSettings({
    followPathsSites: { 'https://off.example': false, 'https://on.example': true },
  });
  const cases: [boolean, string, boolean][] = [
    [true, 'https://any.example/x', true],
    [true, 'https://off.example/room', false],
    [false, 'https://any.example', false],
    [false, 'https://on.example', true],
  ];
  for (const [global, url, want] of cases) {
    assert.equal(followPathsFor({ ...s, followPaths: global }, url), want, `${global} ${url}`);
  }
  assert.deepEqual(followPathsSitePatch(s, 'https://new.example/x', false)?.followPathsSites, {
    'https://off.example': false,
    'https://on.example': true,
    'https://new.example': false,
  });
  assert.deepEqual(followPathsSitePatch(s, 'https://off.example', null)?.followPathsSites, {
    'https://on.example': true,
  });
  assert.equal(followPathsSitePatch(s, 'file:///x', true), null);
});

test('releaseEnabledFor: site override beats the global switch', () => {
  const s = validateSettings({
    releaseOnMute: true,
    siteOverrides: { 'https://off.example': { release: false }, 'https://on.example': { release: true } },
  });
  const cases: [boolean, string, boolean][] = [
    [true, 'https://any.example/x', true],
    [true, 'https://off.example/room/1', false],
    [false, 'https://any.example', false],
    [false, 'https://on.example', true],
    [true, 'about:blank', true],
  ];
  for (const [global, url, want] of cases) {
    assert.equal(releaseEnabledFor({ ...s, releaseOnMute: global }, url), want, `${global} ${url}`);
  }
});

test('releaseAllowedForSource: bluetooth kept open by default', () => {
  assert.equal(releaseAllowedForSource(DEFAULT_SETTINGS, false), true);
  assert.equal(releaseAllowedForSource(DEFAULT_SETTINGS, true), false);
  assert.equal(releaseAllowedForSource({ ...DEFAULT_SETTINGS, bluetoothPolicy: 'release' }, true), true);
});

function fakeArea() {
  const data = new Map<string, unknown>();
  const listeners: Parameters<StorageChangedLike['addListener']>[0][] = [];
  return {
    data,
    area: {
      get: async (key: string) => (data.has(key) ? { [key]: structuredClone(data.get(key)) } : {}),
      set: async (items: Record<string, unknown>) => {
        for (const [k, v] of Object.entries(items)) {
          data.set(k, structuredClone(v));
          for (const l of listeners) l({ [k]: { newValue: structuredClone(v) } }, 'sync');
        }
      },
    },
    changed: { addListener: (cb: (typeof listeners)[number]) => listeners.push(cb) },
  };
}

test('store: update, site overrides, change events', async () => {
  const f = fakeArea();
  const store = createSettingsStore(f.area, f.changed);
  const seen: number[] = [];
  store.onChange((s) => seen.push(s.releaseDelayMs));
  assert.deepEqual(await store.get(), DEFAULT_SETTINGS);
  assert.equal((await store.update({ releaseDelayMs: 500 })).releaseDelayMs, 500);
  await assert.rejects(store.update({ releaseDelayMs: 10_001 }), RangeError);
  assert.equal((await store.update({ grantKeepaliveMs: 8000 })).grantKeepaliveMs, 8000);
  await assert.rejects(
    store.update({ grantKeepaliveMs: 1000 }),
    /grant keepalive must be 5000-180000 ms, got 1000/,
  );
  await store.setSiteOverride('https://meet.example.com/room', { release: false });
  assert.deepEqual((await store.get()).siteOverrides, { 'https://meet.example.com': { release: false } });
  await store.setSiteOverride('meet.example.com', null);
  assert.deepEqual((await store.get()).siteOverrides, {});
  await assert.rejects(store.setSiteOverride('file:///x', { release: true }), TypeError);
  assert.deepEqual(seen, [500, 500, 500, 500]);
  assert.ok(f.data.has(SETTINGS_KEY));
});

test("keepSendingFor: the site's answer or none; the patch sets and clears one", () => {
  const s = validateSettings({
    keepSendingSites: { 'https://on.example': true, 'https://off.example': false },
  });
  assert.equal(keepSendingFor(s, 'https://on.example/room'), true);
  assert.equal(keepSendingFor(s, 'https://off.example'), false);
  assert.equal(keepSendingFor(s, 'https://any.example'), null);
  assert.equal(keepSendingFor(s, 'not a url at all'), null);
  assert.deepEqual(keepSendingSitePatch(s, 'https://any.example/x', true)?.keepSendingSites, {
    'https://on.example': true,
    'https://off.example': false,
    'https://any.example': true,
  });
  assert.deepEqual(keepSendingSitePatch(s, 'https://on.example', null)?.keepSendingSites, {
    'https://off.example': false,
  });
  assert.equal(keepSendingSitePatch(s, 'file:///x', true), null);
});
