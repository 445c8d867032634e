import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { AudioStream } from '../shared/protocol.ts';
import { recordStream } from './fakes.test-util.ts';
import { classifySource } from './release-bluetooth.ts';

const stream = (index: number, extra: Record<string, unknown>): AudioStream =>
  recordStream(index, { client_index: 1, device_index: 1, ...extra });

test('classifySource', () => {
  const bt = stream(1, { device_bus: 'bluetooth', device_props: { 'device.description': 'Headset' } });
  const usb = stream(2, { device_bus: 'usb', device_props: { 'device.description': 'USB Mic' } });
  const parec = stream(3, {
    application_name: 'parec',
    application_process_binary: 'parec',
    device_bus: 'bluetooth',
  });
  const onDefault = stream(4, { device_name: 'bt_source', device_props: { 'device.bus': 'bluetooth' } });
  const cases: [AudioStream[], string, boolean, number | null][] = [
    [[], 'x', false, null],
    [[bt], 'Headset', true, 1],
    [[bt, usb], 'USB Mic', false, 2], // the label picks the source
    // No match: no verdict. Before the cross-tab fix any Chromium stream on Bluetooth answered here,
    // which told a frame about other tabs' microphones.
    [[usb, bt], 'unknown label', false, null],
    [[usb], 'USB Mic', false, 2],
    [[parec], '', false, null], // not Chromium's
    [[parec], 'Default', false, null],
    [[onDefault, usb], 'Default', true, 4], // the default device: the server's default source
    [[onDefault, usb], 'Default - USB Mic', false, 2], // "Default - <description>" names the device
    [[onDefault, usb], 'Default - Something else', true, 4],
    [[stream(5, { device_props: { 'device.bus': 'bluetooth' } })], '', false, null], // no label, no verdict
    [[stream(6, { device_props: { 'device.bus': 'bluetooth', 'device.description': 'P' } })], 'P', true, 6],
  ];
  for (const [streams, label, bluetooth, index] of cases) {
    const v = classifySource(streams, label, 'bt_source');
    assert.equal(v.bluetooth, bluetooth, `${label}`);
    assert.equal(v.stream?.index ?? null, index, `${label}`);
  }
});
