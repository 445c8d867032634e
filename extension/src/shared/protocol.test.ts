// Runs the shared protocol fixtures (fixtures/protocol/*.json) through the TS guards; the Rust host
// runs the same cases in native-host/tests/fixtures.rs.
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  decodeHostToExtension,
  isExtensionToHost,
  isResultFor,
  REQUEST_TYPES,
  type RequestType,
  requestErrorCode,
} from './protocol.ts';

interface FixtureCase {
  name: string;
  kind: 'request' | 'response' | 'event';
  valid: boolean;
  json?: unknown;
  json_text?: string;
  request_type?: RequestType;
  expect_error_code?: number;
}

const dir = fileURLToPath(new URL('../../../fixtures/protocol/', import.meta.url));
const files = readdirSync(dir).filter((f) => f.endsWith('.json'));

/** The frame body text of a case, and its parsed value (undefined when not JSON). */
function body(c: FixtureCase): { text: string; value: unknown } {
  if (c.json_text !== undefined) {
    try {
      return { text: c.json_text, value: JSON.parse(c.json_text) };
    } catch {
      return { text: c.json_text, value: undefined };
    }
  }
  return { text: JSON.stringify(c.json), value: c.json };
}

function accepts(c: FixtureCase): boolean {
  const { value } = body(c);
  if (c.kind === 'request') return isExtensionToHost(value);
  const msg = decodeHostToExtension(value);
  if (msg === null) return false;
  if (c.kind === 'event') return msg.type === 'event';
  if (msg.type === 'event') return false;
  if (msg.type === 'result' && c.request_type !== undefined) return isResultFor(c.request_type, msg.result);
  return true;
}

test('fixture files exist', () => {
  assert.deepEqual(files.sort(), ['events.json', 'requests.json', 'responses.json']);
});

for (const file of files) {
  const cases = JSON.parse(readFileSync(join(dir, file), 'utf8')) as FixtureCase[];
  describe(file, () => {
    for (const c of cases) {
      test(`${c.valid ? 'accepts' : 'rejects'} ${c.kind}: ${c.name}`, () => {
        assert.equal(
          (c.json === undefined) !== (c.json_text === undefined),
          true,
          'exactly one of json/json_text',
        );
        assert.equal(accepts(c), c.valid);
        if (c.kind === 'request') {
          const code = requestErrorCode(body(c).text);
          assert.equal(code, c.valid ? null : (c.expect_error_code ?? null));
        }
        if (c.request_type !== undefined) assert.ok(REQUEST_TYPES.includes(c.request_type));
      });
    }
  });
}
