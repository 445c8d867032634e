import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'node:test';
import { releaseEntry } from './changelog.mjs';
import { epochOf } from './reproducible.mjs';

const ROOT = join(import.meta.dirname, '../..');

test("CHANGELOG.md's first entry is package.json's version: a version bump needs its entry", () => {
  const version = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')).version;
  const entry = releaseEntry(readFileSync(join(ROOT, 'CHANGELOG.md'), 'utf8'), version);
  assert.equal(entry.version, version);
  assert.match(entry.date, /^\d{4}-\d{2}-\d{2}$/);
});

test('the first entry counts, not a later one; no entry or no date is an error', () => {
  const text = '# Changelog\n\n## [0.2.0] - 2027-01-02\n\n## [0.1.0] - 2026-11-26\n';
  assert.deepEqual(releaseEntry(text, '0.2.0'), { version: '0.2.0', date: '2027-01-02' });
  assert.throws(() => releaseEntry(text, '0.1.0'), /first entry is 0\.2\.0, not package\.json's 0\.1\.0/);
  assert.throws(() => releaseEntry('# Changelog\n\n## [Unreleased]\n', '0.1.0'), /no `## \[<version>\]/);
  assert.throws(() => releaseEntry('## [0.1.0] - 2026-13-45\n', '0.1.0'), /not a date/);
});

test('the epoch of a date is its midnight UTC', () => {
  assert.equal(epochOf('1970-01-02'), 86400);
});
