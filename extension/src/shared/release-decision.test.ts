import assert from 'node:assert/strict';
import { test } from 'node:test';
import {
  KEPT,
  releaseConfig,
  releaseDecision,
  siteDecision,
  standingDecision,
  UNANSWERED,
} from './release-decision.ts';
import { DEFAULT_SETTINGS, type Settings } from './settings.ts';

const SITE = 'https://meet.example.com/room?x=1';

test('releaseDecision: the site switch first, then the Bluetooth policy', () => {
  const off = { 'https://meet.example.com': { release: false } };
  const on = { 'https://meet.example.com': { release: true } };
  const cases: [name: string, s: Partial<Settings>, bluetooth: boolean | undefined, reason: string | null][] =
    [
      ['defaults, no source yet', {}, undefined, null],
      ['defaults, wired source', {}, false, null],
      ['defaults, Bluetooth source', {}, true, KEPT.bluetooth],
      ['Bluetooth released by choice', { bluetoothPolicy: 'release' }, true, null],
      ['global switch off', { releaseOnMute: false }, false, KEPT.site],
      ['global switch off, site on', { releaseOnMute: false, siteOverrides: on }, false, null],
      ['site off', { siteOverrides: off }, undefined, KEPT.site],
      ['site off beats Bluetooth', { siteOverrides: off }, true, KEPT.site],
      [
        'site off, Bluetooth released by choice',
        { siteOverrides: off, bluetoothPolicy: 'release' },
        true,
        KEPT.site,
      ],
      ['site on, Bluetooth kept', { releaseOnMute: false, siteOverrides: on }, true, KEPT.bluetooth],
      ['another site off', { siteOverrides: { 'https://other.example': { release: false } } }, false, null],
    ];
  for (const [name, s, bluetooth, reason] of cases) {
    const d = releaseDecision({ settings: { ...DEFAULT_SETTINGS, ...s }, url: SITE, bluetooth });
    assert.deepEqual(d, reason === null ? { allow: true, reason: null } : { allow: false, reason }, name);
  }
});

test('releaseDecision: a page without a site (about:blank, data:) follows the global switch', () => {
  assert.deepEqual(releaseDecision({ settings: DEFAULT_SETTINGS, url: 'about:blank' }), {
    allow: true,
    reason: null,
  });
  assert.deepEqual(
    releaseDecision({ settings: { ...DEFAULT_SETTINGS, releaseOnMute: false }, url: 'about:blank' }),
    { allow: false, reason: KEPT.site },
  );
});

test('releaseConfig carries the delay and the site answer', () => {
  assert.deepEqual(releaseConfig({ ...DEFAULT_SETTINGS, releaseDelayMs: 500 }, SITE), {
    delay_ms: 500,
    release: true,
    reason: null,
    paths: true,
    keepalive_ms: DEFAULT_SETTINGS.grantKeepaliveMs,
    keep_sending: null,
  });
  assert.deepEqual(
    releaseConfig(
      { ...DEFAULT_SETTINGS, siteOverrides: { 'https://meet.example.com': { release: false } } },
      SITE,
    ),
    {
      delay_ms: 3000,
      release: false,
      reason: KEPT.site,
      paths: true,
      keepalive_ms: DEFAULT_SETTINGS.grantKeepaliveMs,
      keep_sending: null,
    },
  );
  const off = { ...DEFAULT_SETTINGS, followPathsSites: { 'https://meet.example.com': false } };
  assert.equal(releaseConfig(off, SITE).paths, false);
  const sending = (answer: boolean) => ({
    ...DEFAULT_SETTINGS,
    keepSendingSites: { 'https://meet.example.com': answer },
  });
  assert.equal(releaseConfig(sending(true), SITE).keep_sending, true);
  assert.equal(releaseConfig(sending(false), SITE).keep_sending, false);
  assert.equal(releaseConfig(sending(true), 'https://other.example.com/').keep_sending, null);
  assert.equal(releaseConfig({ ...DEFAULT_SETTINGS, grantKeepaliveMs: 8000 }, SITE).keepalive_ms, 8000);
});

test('the unanswered release is decided here: kept open, with its reason', () => {
  assert.deepEqual(UNANSWERED, { allow: false, reason: KEPT.unanswered });
  assert.ok(Object.isFrozen(UNANSWERED));
});

test('the site switch is decided here: siteDecision, which releaseDecision and releaseConfig follow', () => {
  const off = { ...DEFAULT_SETTINGS, siteOverrides: { 'https://meet.example.com': { release: false } } };
  const globalOff = { ...DEFAULT_SETTINGS, releaseOnMute: false };
  for (const [name, s] of [
    ['on', DEFAULT_SETTINGS],
    ['site off', off],
    ['global off', globalOff],
  ] as const) {
    const site = siteDecision(s, SITE);
    const config = releaseConfig(s, SITE);
    // The background's answer, the standing answer the page world gets, and the page world's reading of it.
    assert.deepEqual(releaseDecision({ settings: s, url: SITE, bluetooth: false }), site, name);
    assert.deepEqual({ allow: config.release, reason: config.reason }, site, name);
    assert.deepEqual(standingDecision(config), site, name);
  }
  // A config without a reason (an older sender) still reads as the site switch.
  assert.deepEqual(standingDecision({ delay_ms: 0, release: false, reason: null }), {
    allow: false,
    reason: KEPT.site,
  });
});

test('releaseDecision: a slow reopen without the host keeps the device, after the site switch and Bluetooth', () => {
  const d = (s: Partial<Settings>, bluetooth: boolean | undefined, firstWordsMs: number | null | undefined) =>
    releaseDecision({ settings: { ...DEFAULT_SETTINGS, ...s }, url: SITE, bluetooth, firstWordsMs });
  assert.deepEqual(d({}, false, 950), { allow: false, reason: KEPT.firstWords });
  assert.deepEqual(d({}, undefined, 950), { allow: false, reason: KEPT.firstWords });
  assert.deepEqual(d({}, false, null), { allow: true, reason: null });
  assert.deepEqual(d({}, false, undefined), { allow: true, reason: null });
  assert.deepEqual(d({ releaseOnMute: false }, false, 950), { allow: false, reason: KEPT.site });
  assert.deepEqual(d({}, true, 950), { allow: false, reason: KEPT.bluetooth });
});
