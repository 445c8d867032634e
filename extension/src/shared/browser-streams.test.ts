import assert from 'node:assert/strict';
import { test } from 'node:test';
import { microphoneNameOf, programNameOf, UNNAMED_PROGRAM } from './browser-streams.ts';

test('a stream named as a person knows it, never by the server’s numbers', () => {
  const mic = { device_description: null, device_props: {}, device_name: 'alsa_input.usb-x' };
  assert.equal(microphoneNameOf({ ...mic, device_description: 'USB Mic' }), 'USB Mic');
  assert.equal(microphoneNameOf({ ...mic, device_props: { 'device.description': 'Built-in' } }), 'Built-in');
  assert.equal(microphoneNameOf(mic), 'alsa_input.usb-x');
  assert.equal(microphoneNameOf({ ...mic, device_name: null }), 'an unnamed microphone');
  assert.equal(
    programNameOf({ application_name: 'Chromium', application_process_binary: 'chromium' }),
    'Chromium',
  );
  assert.equal(programNameOf({ application_name: null, application_process_binary: 'arecord' }), 'arecord');
  assert.equal(programNameOf({ application_name: null, application_process_binary: null }), UNNAMED_PROGRAM);
});
