// The README as a user's guide: its bars (length, user sections first, the two quick-start commands, the
// marked install blocks, links that resolve) and every command in it checked against this checkout.
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { test } from 'node:test';
import { onCi, unmetNeed } from '../e2e/rig/needs.ts';
import { HOST_BINARY } from '../e2e/rig/paths.ts';
import { README, readmeBlock } from '../e2e/rig/readme.ts';
import { type Checkout, checkCommand, distFiles, readmeCommands, thisCheckout } from './readme-commands.ts';

const text = readFileSync(README, 'utf8');
const lines = text.split('\n');
const commands = readmeCommands(text);
/** A command that runs micoff-host (checked by its own parser). */
const isHost = (c: string) => /^(sudo )?micoff-host /.test(`${c} `);
/** The README's bar: a guide a user reads, not a notebook (issue 31). */
const MAX_LINES = 180;
const USER_SECTIONS = ['Install', 'Check', 'See the savings', 'Uninstall', 'Troubleshooting'];
const INSTALL_BLOCKS = ['host', 'chromium', 'firefox', 'uninstall'];

/** micoff-host's own parser checks its commands: missing, the test says why (and fails under CI). */
const hostMissing = existsSync(HOST_BINARY)
  ? null
  : `${HOST_BINARY} is not built (cargo build --release, or MICOFF_HOST=<binary>)`;
function needHost(t: { skip(why: string): void }): boolean {
  const unmet = unmetNeed(hostMissing, onCi());
  if (!unmet) return true;
  if ('fail' in unmet) throw new Error(unmet.fail);
  t.skip(unmet.skip);
  return false;
}

test('README: at most 180 lines, the user sections first and in order, then Develop', () => {
  assert.ok(lines.length <= MAX_LINES, `README.md has ${lines.length} lines (bar: ${MAX_LINES})`);
  const sections = lines.filter((l) => l.startsWith('## ')).map((l) => l.slice(3));
  assert.deepEqual(sections, [...USER_SECTIONS, 'Develop']);
});

test("README: the quick start is exactly the two commands, in Develop's first block", () => {
  const develop = text.slice(text.indexOf('\n## Develop\n'));
  assert.deepEqual(readmeCommands(develop).slice(0, 2), ['npm run demo', 'npm test']);
  const block = /```sh\n([\s\S]*?)\n```/.exec(develop)?.[1] ?? '';
  assert.equal(readmeCommands(`\`\`\`sh\n${block}\n\`\`\``).length, 2);
});

test('README: the four marked install blocks are there, each in its section', () => {
  for (const name of INSTALL_BLOCKS) assert.ok(readmeBlock(name).length > 0, name);
  const at = (marker: string) => text.indexOf(`<!-- readme-install: ${marker} -->`);
  const section = (title: string) => text.indexOf(`\n## ${title}\n`);
  for (const name of ['host', 'chromium', 'firefox'])
    assert.ok(at(name) > section('Install') && at(name) < section('Check'), `${name} under Install`);
  assert.ok(at('uninstall') > section('Uninstall') && at('uninstall') < section('Troubleshooting'));
});

/** The README and the pages it hands its details to: their links must resolve. */
const LINKED_PAGES = [README, join(dirname(README), 'docs/usage.md'), join(dirname(README), 'docs/cli.md')];

test('README, docs/usage.md, docs/cli.md: every relative link names a file that exists, and its #anchor a heading there', () => {
  for (const page of LINKED_PAGES) {
    const md = readFileSync(page, 'utf8');
    const relative = [...md.matchAll(/\]\(([^)\s]+)\)/g)]
      .map((m) => m[1] ?? '')
      .filter((l) => !/^[a-z]+:/.test(l));
    assert.ok(relative.length >= 2, `${page}: only ${relative.length} relative links`);
    for (const link of relative) {
      const [path = '', anchor] = link.split('#');
      const file = path === '' ? page : join(dirname(page), path);
      assert.ok(existsSync(file), `${page}: ${link}: ${file} does not exist`);
      if (anchor)
        assert.ok(
          headingSlugs(readFileSync(file, 'utf8')).includes(anchor),
          `${page}: ${link}: no such heading`,
        );
    }
  }
});

/** GitHub's anchors of a Markdown file's headings (lower case, punctuation out, spaces to hyphens). */
function headingSlugs(md: string): string[] {
  return md
    .split('\n')
    .filter((l) => /^#{1,6} /.test(l))
    .map((l) =>
      l
        .replace(/^#+ /, '')
        .toLowerCase()
        .replace(/[^\p{L}\p{N} _-]/gu, '')
        .replace(/ /g, '-'),
    );
}

test('commands: the README has them all (sh blocks and inline), the install blocks among them', () => {
  for (const c of [
    ...INSTALL_BLOCKS.flatMap((b) => readmeBlock(b)),
    'micoff-host doctor',
    'micoff-host top',
    'npm run demo',
    'npm test',
    'sudo micoff-host uninstall --system',
  ])
    assert.ok(commands.includes(c), `${c} is not among the README's commands`);
});

test('commands: each one not of micoff-host names a script, a file or a release file that exists', () => {
  const co: Checkout = {
    ...thisCheckout(HOST_BINARY),
    hostParses: () => {
      throw new Error('not a micoff-host command');
    },
  };
  const others = commands.filter((c) => !isHost(c));
  assert.ok(others.length >= 5, `only ${others.length} commands`);
  assert.deepEqual(
    others.map((c) => checkCommand(c, co)).filter((e) => e !== null),
    [],
  );
});

test("commands: each micoff-host one has the subcommand and options micoff-host's parser takes", (t) => {
  if (!needHost(t)) return;
  const co = thisCheckout(HOST_BINARY);
  const host = commands.filter(isHost);
  assert.ok(host.length >= 5, `only ${host.length} micoff-host commands`);
  assert.deepEqual(
    host.map((c) => checkCommand(c, co)).filter((e) => e !== null),
    [],
  );
});

test('commands: micoff-host and the demo reject what they do not have (the check can fail)', (t) => {
  if (!needHost(t)) return;
  const co = thisCheckout(HOST_BINARY);
  assert.equal(checkCommand('micoff-host top --browser chromium --interval 2', co), null);
  assert.match(
    checkCommand('micoff-host top --no-such-flag', co) ?? '',
    /unexpected argument '--no-such-flag'/,
  );
  assert.match(checkCommand('micoff-host top --browser opera', co) ?? '', /invalid value 'opera'/);
  assert.match(checkCommand('sudo micoff-host frobnicate', co) ?? '', /unrecognized subcommand 'frobnicate'/);
  assert.match(checkCommand('micoff-host latency set --capture-ms 999', co) ?? '', /out of range/);
  assert.equal(checkCommand('npm run demo -- --browser both', co), null);
  assert.match(checkCommand('npm run demo -- --browsers both', co) ?? '', /Unknown option '--browsers'/);
  assert.match(checkCommand('npm run demo -- --browser opera', co) ?? '', /--browser must be/);
});

/** A checkout with fixed answers: the checks that need no binary. */
const fixture: Checkout = {
  scripts: { test: 'bash scripts/test.sh', demo: 'bash scripts/demo.sh', build: 'node scripts/build.mjs' },
  version: '1.2.3',
  exists: (rel) => rel === 'scripts/ensure-deps.sh',
  hostParses: (args) => (args.includes('--made-up') ? "unexpected argument '--made-up' found" : null),
  demoParses: () => null,
};

test('checkCommand: scripts, files, release files and programs it does not know', () => {
  const ok = [
    'npm test',
    'npm run build',
    'bash scripts/ensure-deps.sh',
    'sudo apt install ./dist/micoff-host_1.2.3-1_amd64.deb',
    'sudo apt purge micoff-host',
    'micoff-host install --browser chromium --chromium-crx dist/micoff-1.2.3.crx',
  ];
  for (const c of ok) assert.equal(checkCommand(c, fixture), null, c);
  const wrong: [string, RegExp][] = [
    ['npm run nope', /no script "nope"/],
    ['npm run build -- --fast', /nothing checks the options of `npm run build`/],
    ['npm test --watch', /not `npm test`/],
    ['bash scripts/nope.sh', /does not exist/],
    ['sudo apt install ./dist/micoff-host_1.2.2-1_amd64.deb', /not a file `npm run package` writes/],
    ['micoff-host install --firefox-xpi dist/micoff-0.1.0.xpi', /not a file `npm run package` writes/],
    ['sudo apt purge micoff', /only `apt install/],
    ['micoff-host doctor --made-up', /unexpected argument '--made-up'/],
    ['curl https://example.org/install.sh', /no check for the program curl/],
    ['micoff-host doctor | less', /shell syntax/],
  ];
  for (const [c, why] of wrong) assert.match(checkCommand(c, fixture) ?? '', why, c);
  assert.ok(distFiles('1.2.3').includes('micoff-1.2.3.xpi'));
});

test('readmeCommands: sh block lines without comments, inline command spans, other blocks left out', () => {
  const md = [
    'Run `micoff-host doctor` or `micoff-host <command>`; errors read `micoff-host x: …`; see `npm',
    'test`.',
    '```sh',
    'npm run demo   # the main job',
    '# a comment',
    '```',
    '```',
    'micoff-host not-a-command (plain output)',
    '```',
    '```json',
    '{"a": "`micoff-host top`"}',
    '```',
  ].join('\n');
  assert.deepEqual(readmeCommands(md), ['npm run demo', 'micoff-host doctor', 'npm test']);
  assert.throws(() => readmeCommands('```sh\nnpm test\n'), /never ends/);
});
