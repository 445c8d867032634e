import assert from 'node:assert/strict';
import { test } from 'node:test';
import { firefoxReleaseCommand } from '../shared/firefox-release.ts';
import type { NativeReleaseVerdict, NativeReleaseView } from '../shared/messages/popup-background.ts';
import { nativeReleaseLine } from './native-release-line.ts';

const COMMAND = firefoxReleaseCommand(3000);
const v = (now: NativeReleaseVerdict, last: NativeReleaseView['last'] = null): NativeReleaseView => ({
  now,
  last,
  delay_ms: 3000,
  margin_ms: 2000,
  command: COMMAND,
});

test('the command is micoff-host’s, with micoff’s delay', () => {
  assert.equal(COMMAND, 'micoff-host install --firefox-release --release-delay-ms 3000');
  assert.equal(firefoxReleaseCommand(250.4), 'micoff-host install --firefox-release --release-delay-ms 250');
});

test('nativeReleaseLine: what the popup says, and when it shows the command', () => {
  const cases: [string, NativeReleaseView, RegExp, string | null, string | null][] = [
    ['never muted', v({ state: 'idle' }), /checked at the audio server at the next mute/, null, null],
    ['muted, waiting', v({ state: 'pending', deadline_ms: 9 }), /^checking at the audio server/, null, null],
    [
      'in effect',
      v({ state: 'in_effect', after_ms: 300, late: false }),
      /^Firefox released the microphone 0\.3 s after the mute: its own release is in effect\.$/,
      null,
      'in_effect',
    ],
    [
      'in effect at the mute itself (the device was on for longer than Firefox’s delay)',
      v({ state: 'in_effect', after_ms: 12, late: false }),
      /^Firefox released the microphone as you muted: its own release is in effect\.$/,
      null,
      'in_effect',
    ],
    [
      'in effect, later than micoff’s delay',
      v({ state: 'in_effect', after_ms: 8000, late: true }),
      /only 8\.0 s after the mute \(micoff's release delay is 3\.0 s\): Firefox's own delay is longer/,
      COMMAND,
      'in_effect',
    ],
    [
      'not in effect',
      v({ state: 'not_in_effect', open_ms: 5000 }),
      /^Firefox's own release is not in effect: the microphone was still open at the audio server 5\.0 s after the mute.*restart Firefox:$/,
      COMMAND,
      'not_in_effect',
    ],
    [
      'cannot tell',
      v({ state: 'unknown', why: 'micoff-host does not see the audio server' }),
      /cannot tell at this mute \(micoff-host does not see the audio server\)/,
      null,
      null,
    ],
    [
      'unmuted after a finding: the finding, as the last mute’s',
      v({ state: 'idle' }, { state: 'not_in_effect', open_ms: 5000, at_ms: 1 }),
      /^At the last mute, Firefox's own release is not in effect/,
      COMMAND,
      'not_in_effect',
    ],
    [
      'muted again after a finding: checking, and the last finding',
      v({ state: 'pending', deadline_ms: 9 }, { state: 'in_effect', after_ms: 300, late: false, at_ms: 1 }),
      /^checking at the audio server.* At the last mute, Firefox released the microphone 0\.3 s/,
      null,
      'in_effect',
    ],
  ];
  assert.match(nativeReleaseLine(v({ state: 'idle' }), false).text, /which needs micoff-host\.$/);
  for (const [name, view, text, command, finding] of cases) {
    const line = nativeReleaseLine(view);
    assert.match(line.text, text, name);
    assert.equal(line.command, command, name);
    assert.equal(line.finding, finding, name);
    assert.equal(line.tone, command ? 'warn' : finding ? 'ok' : '', name);
  }
});
