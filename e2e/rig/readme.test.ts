import assert from 'node:assert/strict';
import { test } from 'node:test';
import { readmeBlock } from './readme.ts';

const text = [
  '# x',
  '<!-- readme-install: host -->',
  '```sh',
  'npm run package          # builds dist/',
  '',
  '# a comment line',
  'sudo apt install ./dist/x.deb',
  '```',
  '<!-- readme-install: empty -->',
  '```sh',
  '```',
  '<!-- readme-install: open -->',
  '```sh',
  'a',
].join('\n');

test('a block gives its command lines, comments and blank lines dropped', () => {
  assert.deepEqual(readmeBlock('host', text), ['npm run package', 'sudo apt install ./dist/x.deb']);
});

test('a missing, empty or unterminated block is an error', () => {
  assert.throws(() => readmeBlock('nope', text), /no <!-- readme-install: nope -->/);
  assert.throws(() => readmeBlock('empty', text), /has no command/);
  assert.throws(() => readmeBlock('open', text), /never ends/);
});

test("the README's own install blocks are there", () => {
  for (const name of ['host', 'chromium', 'firefox', 'uninstall']) assert.ok(readmeBlock(name).length > 0);
});
