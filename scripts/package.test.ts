import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash, createPublicKey, generateKeyPairSync, verify } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { chromeIdFromKey } from './build.mjs';
import {
  crx3,
  filesWithKey,
  LOCAL_KEY_FILE,
  loadReleaseKey,
  localKey,
  localKeyPath,
  publicKeyBase64,
  zip,
} from './package.mjs';

// A key made here for the test only: it checks the CRX3 encoding, it never signs a release.
const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });

function readVarint(buf: Buffer, at: number): [number, number] {
  let value = 0;
  let shift = 1;
  let i = at;
  for (;;) {
    const b = buf[i++] ?? 0;
    value += (b & 0x7f) * shift;
    if (b < 0x80) return [value, i];
    shift *= 128;
  }
}

/** The one payload of field `n` (the test fails when it is missing). */
function one(m: Map<number, Buffer[]>, n: number): Buffer {
  const v = m.get(n)?.[0];
  assert.ok(v, `field ${n} present`);
  return v;
}

/** Length-delimited protobuf fields: field number -> list of payloads. */
function fields(buf: Buffer): Map<number, Buffer[]> {
  const out = new Map<number, Buffer[]>();
  let i = 0;
  while (i < buf.length) {
    const [tag, a] = readVarint(buf, i);
    assert.equal(tag & 7, 2, 'only length-delimited fields');
    const [len, b] = readVarint(buf, a);
    const list = out.get(tag >> 3) ?? [];
    list.push(buf.subarray(b, b + len));
    out.set(tag >> 3, list);
    i = b + len;
  }
  return out;
}

test('zip: unzip reads back every file byte for byte', () => {
  const dir = mkdtempSync(join(tmpdir(), 'micoff-zip-'));
  try {
    const files: [string, Buffer][] = [
      ['manifest.json', Buffer.from('{"a":1}\n'.repeat(50))],
      ['icons/icon-16.png', Buffer.from([0x89, 0x50, 1, 2, 3])],
    ];
    const path = join(dir, 'x.zip');
    writeFileSync(path, zip(files));
    execFileSync('unzip', ['-q', path, '-d', join(dir, 'out')]);
    for (const [name, data] of files) assert.deepEqual(readFileSync(join(dir, 'out', name)), data);
    assert.deepEqual(zip(files), zip(files), 'deterministic');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('crx3: header carries the public key, the id and a signature that verifies over the zip', () => {
  const body = zip([['manifest.json', Buffer.from('{}')]]);
  const crx = crx3(body, privateKey);
  assert.equal(crx.subarray(0, 4).toString('latin1'), 'Cr24');
  assert.equal(crx.readUInt32LE(4), 3);
  const headerLen = crx.readUInt32LE(8);
  const header = fields(crx.subarray(12, 12 + headerLen));
  assert.deepEqual(crx.subarray(12 + headerLen), body);
  const proof = one(header, 2);
  const signedData = one(header, 10000);
  const p = fields(proof);
  const spki = one(p, 1);
  const signature = one(p, 2);
  assert.deepEqual(spki, createPublicKey(privateKey).export({ type: 'spki', format: 'der' }));
  const crxId = one(fields(signedData), 1);
  assert.deepEqual(crxId, createHash('sha256').update(spki).digest().subarray(0, 16));
  const len = Buffer.alloc(4);
  len.writeUInt32LE(signedData.length);
  const message = Buffer.concat([Buffer.from('CRX3 SignedData\0', 'latin1'), len, signedData, body]);
  assert.ok(
    verify('sha256', message, createPublicKey({ key: spki, format: 'der', type: 'spki' }), signature),
  );
  // The id Chrome shows is the crx id in a-p letters: the same function the build uses for the key.
  const letters = [...crxId.toString('hex')].map((c) => String.fromCharCode(97 + Number.parseInt(c, 16)));
  assert.equal(letters.join(''), chromeIdFromKey(spki.toString('base64')));
});

test('loadReleaseKey: a key whose public half is not the manifest key is refused (the id would change)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'micoff-key-'));
  try {
    const pem = join(dir, 'k.pem');
    writeFileSync(pem, privateKey.export({ type: 'pkcs8', format: 'pem' }));
    const { key } = JSON.parse(readFileSync(new URL('../manifests/chrome.json', import.meta.url), 'utf8'));
    assert.throws(
      () => loadReleaseKey(pem, key),
      /not micoff's release key.*ipgdconbmedmelnlpalblnicflhpfkim/,
    );
    const own = createPublicKey(privateKey).export({ type: 'spki', format: 'der' }).toString('base64');
    assert.ok(loadReleaseKey(pem, own));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('filesWithKey: --own-key puts the signing key in the manifest, so unpacked, zip and crx share its id', () => {
  const dir = mkdtempSync(join(tmpdir(), 'micoff-ownkey-'));
  try {
    const manifest = { manifest_version: 3, name: 'm', version: '1.0', key: 'bWljb2Zm' };
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify(manifest));
    writeFileSync(join(dir, 'background.js'), '// code\n');
    writeFileSync(join(dir, 'extension-id.txt'), 'left out\n');
    const own = publicKeyBase64(privateKey);
    const files = filesWithKey(dir, own);
    assert.deepEqual(
      files.map(([n]) => n),
      ['background.js', 'manifest.json'],
    );
    const written = JSON.parse(String(files.find(([n]) => n === 'manifest.json')?.[1]));
    assert.deepEqual(written, { ...manifest, key: own });
    // The crx's signed id is the id of the manifest's key: one id for every form.
    const crx = crx3(zip(files), privateKey);
    const header = crx.subarray(12, 12 + crx.readUInt32LE(8));
    const crxId = one(fields(one(fields(header), 10000)), 1).toString('hex');
    const asLetters = [...crxId].map((c) => String.fromCharCode(97 + Number.parseInt(c, 16))).join('');
    assert.equal(asLetters, chromeIdFromKey(written.key));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('localKeyPath: $XDG_CONFIG_HOME/micoff when it is absolute, else ~/.config/micoff', () => {
  assert.equal(
    localKeyPath({ XDG_CONFIG_HOME: '/x/conf', HOME: '/h' }),
    join('/x/conf', 'micoff', LOCAL_KEY_FILE),
  );
  assert.equal(
    localKeyPath({ XDG_CONFIG_HOME: 'rel', HOME: '/h' }),
    join('/h/.config/micoff', LOCAL_KEY_FILE),
  );
  assert.equal(localKeyPath({ HOME: '/h' }), join('/h/.config/micoff', LOCAL_KEY_FILE));
});

test('localKey: made once (folder 0700, file 0600), then the same key on every later run, never overwritten', () => {
  const dir = mkdtempSync(join(tmpdir(), 'micoff-localkey-'));
  try {
    const path = localKeyPath({ XDG_CONFIG_HOME: dir });
    const first = localKey(path);
    assert.equal(first.created, true);
    assert.equal(statSync(path).mode & 0o777, 0o600);
    assert.equal(statSync(dirname(path)).mode & 0o777, 0o700);
    const bytes = readFileSync(path);
    const again = localKey(path);
    assert.equal(again.created, false);
    assert.equal(publicKeyBase64(again.key), publicKeyBase64(first.key));
    assert.deepEqual(readFileSync(path), bytes, 'the file is left as it was');
    // A file there that is not a key is an error that says what to do, and stays as it is.
    writeFileSync(path, 'not a key\n');
    assert.throws(() => localKey(path), /is not a private key.*move it away/);
    assert.equal(readFileSync(path, 'utf8'), 'not a key\n');
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test('the local crx: signed with the local key, its manifest `key` that key, so its id is the key’s (not micoff’s)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'micoff-localcrx-'));
  try {
    const { key: releaseKey } = JSON.parse(
      readFileSync(new URL('../manifests/chrome.json', import.meta.url), 'utf8'),
    );
    writeFileSync(
      join(dir, 'manifest.json'),
      JSON.stringify({ name: 'micoff', version: '1.0', key: releaseKey }),
    );
    const { key } = localKey(join(dir, 'conf', LOCAL_KEY_FILE));
    const pub = publicKeyBase64(key);
    const crx = crx3(zip(filesWithKey(dir, pub)), key);
    const header = fields(crx.subarray(12, 12 + crx.readUInt32LE(8)));
    const crxId = one(fields(one(header, 10000)), 1).toString('hex');
    const asLetters = [...crxId].map((c) => String.fromCharCode(97 + Number.parseInt(c, 16))).join('');
    assert.equal(asLetters, chromeIdFromKey(pub));
    assert.notEqual(asLetters, chromeIdFromKey(releaseKey));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
