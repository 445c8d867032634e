import assert from 'node:assert/strict';
import { test } from 'node:test';
import { comboOf, createIntent, type KeySeen, LEARN_WINDOW_MS, SIGNAL_EVERY_MS } from './intent.ts';

interface Node {
  name: string;
  button?: boolean;
}

function world() {
  let now = 1_000;
  const intent = createIntent({ now: () => now, interactive: (n) => !!(n as Node).button });
  return {
    intent,
    advance(ms: number) {
      now += ms;
    },
  };
}

const key = (code: string, mods: Partial<KeySeen> = {}, keyName = code): KeySeen => ({
  code,
  key: keyName,
  ctrl: false,
  alt: false,
  shift: false,
  meta: false,
  ...mods,
});

test('combinations read as the modifiers held, then the code', () => {
  assert.equal(comboOf(key('KeyD', { ctrl: true })), 'Ctrl+KeyD');
  assert.equal(comboOf(key('KeyM', { ctrl: true, shift: true })), 'Ctrl+Shift+KeyM');
  assert.equal(comboOf(key('Space')), 'Space');
});

test('nothing is a signal before an unmute taught it; visibility always is', () => {
  const { intent } = world();
  const button: Node = { name: 'unmute', button: true };
  assert.equal(intent.pointer('over', { path: [button] }), null);
  assert.equal(intent.pointer('down', { path: [button] }), null);
  assert.equal(intent.key(key('KeyD', { ctrl: true })), null);
  assert.equal(intent.visibility(false), null);
  assert.equal(intent.visibility(true), 'visible');
});

test('a click that unmuted teaches its control: hovering or pressing it again primes, other clicks do not', () => {
  const { intent, advance } = world();
  const icon: Node = { name: 'svg' };
  const button: Node = { name: 'unmute', button: true };
  const chat: Node = { name: 'chat input' };
  intent.pointer('down', { path: [icon, button] });
  advance(120); // pointerdown -> click -> the page's handler unmutes
  intent.noteUnmute();
  assert.deepEqual(intent.learned(), { controls: 1, keys: [] });
  advance(SIGNAL_EVERY_MS);
  assert.equal(intent.pointer('down', { path: [chat] }), null, 'a click elsewhere');
  assert.equal(
    intent.pointer('over', { path: [icon, button] }),
    'pointer',
    'the pointer reaches the control',
  );
  assert.equal(intent.pointer('down', { path: [icon, button] }), null, 'one signal per second');
  advance(SIGNAL_EVERY_MS);
  assert.equal(intent.pointer('down', { path: [button] }), 'pointer');
});

test('an unmute long after the last press teaches nothing (a hotkey of the OS, the page on its own)', () => {
  const { intent, advance } = world();
  const button: Node = { name: 'unmute', button: true };
  intent.pointer('down', { path: [button] });
  advance(LEARN_WINDOW_MS + 1);
  intent.noteUnmute();
  assert.deepEqual(intent.learned(), { controls: 0, keys: [] });
});

test('a key combination that unmuted primes on its first modifier and on itself; plain typing does not', () => {
  const { intent, advance } = world();
  intent.key(key('ControlLeft', { ctrl: true }, 'Control'));
  advance(80);
  intent.key(key('KeyD', { ctrl: true }, 'd'));
  intent.noteUnmute();
  assert.deepEqual(intent.learned().keys, ['Ctrl+KeyD']);
  advance(SIGNAL_EVERY_MS);
  assert.equal(intent.key(key('KeyD', {}, 'd')), null, 'typing d in the chat');
  assert.equal(intent.key(key('ControlLeft', { ctrl: true }, 'Control')), 'key', 'Ctrl goes down first');
  advance(SIGNAL_EVERY_MS);
  assert.equal(intent.key(key('KeyD', { ctrl: true }, 'd')), 'key');
});

test('the most recent press is the one learned, and only once', () => {
  const { intent, advance } = world();
  const button: Node = { name: 'unmute', button: true };
  intent.pointer('down', { path: [button] });
  advance(50);
  intent.key(key('Space', {}, ' '));
  intent.noteUnmute();
  intent.noteUnmute();
  assert.deepEqual(intent.learned(), { controls: 0, keys: ['Space'] });
});
