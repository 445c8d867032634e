import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, test } from 'node:test';
import { elfRuntimeNeeds, sha256Line, tarballBase, writeTarball } from './static.mjs';

const tmp = mkdtempSync(join(tmpdir(), 'micoff-static-test-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

test('a dynamic executable needs its interpreter and libraries; a static one nothing', () => {
  const dynamic = elfRuntimeNeeds(readFileSync('/bin/true'));
  assert.match(dynamic.interpreter ?? '', /ld-linux/);
  assert.ok(dynamic.needed >= 1);
  // Debian's ldconfig is static-pie: a PT_DYNAMIC segment, but no interpreter and no DT_NEEDED.
  assert.ok(existsSync('/sbin/ldconfig'), '/sbin/ldconfig (Debian, static) present');
  assert.deepEqual(elfRuntimeNeeds(readFileSync('/sbin/ldconfig')), { interpreter: null, needed: 0 });
  assert.throws(() => elfRuntimeNeeds(Buffer.from('#!/bin/sh\necho hi\n'.padEnd(64, ' '))), /not an ELF64/);
});

test('the sha256 file is what sha256sum -c checks', () => {
  assert.equal(
    sha256Line('x.tar.gz', Buffer.from('abc')),
    'ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad  x.tar.gz\n',
  );
});

test('the tarball: one folder with the binary, docs and notices; its .sha256 matches, and not after a change', () => {
  const prefix = join(tmp, 'prefix');
  mkdirSync(prefix, { recursive: true });
  writeFileSync(join(prefix, 'SOURCES'), 'libsndfile 1.2.0-1\npulseaudio 16.1-2\n');
  for (const f of ['pulseaudio-LICENSE', 'pulseaudio-LGPL', 'libsndfile-COPYING'])
    writeFileSync(join(prefix, f), f);
  const docs = join(tmp, 'docs');
  mkdirSync(docs, { recursive: true });
  const doc = (name: string) => {
    writeFileSync(join(docs, name), name);
    return join(docs, name);
  };
  const outDir = join(tmp, 'out');
  mkdirSync(outDir, { recursive: true });
  const { tarball, sumFile } = writeTarball({
    stageRoot: join(tmp, 'stage'),
    outDir,
    version: '9.8.7',
    date: '2026-11-26',
    binary: '/bin/true',
    files: {
      man: [doc('micoff-host.1')],
      completions: { bash: doc('micoff-host.bash'), zsh: doc('_micoff-host'), fish: doc('micoff-host.fish') },
    },
    licenseText: 'MIT\n',
    changelogMd: '# Changelog\n',
    protocolMd: '# Protocol\n',
    prefix,
  });
  assert.equal(tarball, join(outDir, `${tarballBase('9.8.7')}.tar.gz`));
  const check = () => spawnSync('sha256sum', ['-c', sumFile], { cwd: outDir, encoding: 'utf8' });
  assert.equal(check().status, 0, check().stdout + check().stderr);

  const listed = execFileSync('tar', ['-tvzf', tarball], { encoding: 'utf8' });
  const base = tarballBase('9.8.7');
  for (const name of [
    'micoff-host',
    'README',
    'LICENSE',
    'CHANGELOG.md',
    'PROTOCOL.md',
    'THIRD-PARTY',
    'licenses/pulseaudio-LGPL',
    'licenses/musl-copyright',
    'man/man1/micoff-host.1',
    'completions/_micoff-host',
  ])
    assert.match(listed, new RegExp(` ${base}/${name.replace('.', '\\.')}\\n`), name);
  assert.match(listed, /^-rwxr-xr-x 0\/0 .* micoff-host-9\.8\.7-x86_64-linux-musl\/micoff-host$/m);
  assert.doesNotMatch(listed, /^\S+ (?!0\/0 )/m, 'every entry owned by 0/0');
  assert.match(readFileSync(join(tmp, 'stage', base, 'THIRD-PARTY'), 'utf8'), /pulseaudio 16\.1-2/);

  const bytes = readFileSync(tarball);
  bytes.writeUInt8(bytes.readUInt8(bytes.length - 1) ^ 1, bytes.length - 1);
  writeFileSync(tarball, bytes);
  assert.notEqual(check().status, 0);
});
