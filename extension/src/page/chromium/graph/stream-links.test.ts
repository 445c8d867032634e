import assert from 'node:assert/strict';
import { test } from 'node:test';
import { createStreamLinks } from './stream-links.ts';

// Streams are plain objects here; `gens` maps a generator's writable to the generator.
function setup() {
  const links = createStreamLinks();
  const gens = new Map<object, string>();
  const generator = (name: string) => {
    const writable = { name: `${name}.writable` };
    gens.set(writable, name);
    return writable;
  };
  const follow = (s: object) => links.follow(s, (x) => gens.get(x) ?? null);
  return { links, generator, follow };
}

test('follow: a processor readable piped through transforms into a generator', () => {
  const { links, generator, follow } = setup();
  const proc = {};
  const mid = {};
  const gen = generator('gen');
  links.link(proc, mid); // pipeThrough
  links.link(mid, gen); // pipeTo
  assert.deepEqual(follow(proc), { ends: ['gen'], open: false });
});

test('follow: nothing linked, or a branch read by page code, is open', () => {
  const { links, generator, follow } = setup();
  const proc = {};
  assert.deepEqual(follow(proc), { ends: [], open: true });
  const teeA = {};
  links.link(proc, teeA); // a readable the page reads itself (no link onward)
  links.link(proc, generator('gen'));
  assert.deepEqual(follow(proc), { ends: ['gen'], open: true });
});

test('follow: a worker transfer links every readable to every writable in it', () => {
  const { links, generator, follow } = setup();
  const proc = {};
  const a = generator('a');
  const b = generator('b');
  links.link(proc, a);
  links.link(proc, b);
  assert.deepEqual(follow(proc), { ends: ['a', 'b'], open: false });
});

test('unlink: a pipe that settled no longer counts; a second pipe on the same pair does', () => {
  const { links, generator, follow } = setup();
  const proc = {};
  const gen = generator('gen');
  links.link(proc, gen);
  links.link(proc, gen);
  links.unlink(proc, gen);
  assert.deepEqual(follow(proc), { ends: ['gen'], open: false });
  links.unlink(proc, gen);
  assert.deepEqual(follow(proc), { ends: [], open: true });
  links.unlink(proc, gen); // more unlinks than links: no effect
  assert.deepEqual(follow(proc), { ends: [], open: true });
});

test('follow: cycles end', () => {
  const { links, generator, follow } = setup();
  const a = {};
  const b = {};
  links.link(a, b);
  links.link(b, a);
  links.link(b, generator('gen'));
  assert.deepEqual(follow(a), { ends: ['gen'], open: false });
});
