// The README's commands and what each must name that exists: the lines of its fenced sh blocks and its
// inline `micoff-host …` / `npm …` code spans, each checked against this checkout (npm scripts, files,
// the release files' names, and micoff-host's and the demo's own parsers). Used by scripts/readme.test.ts.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../e2e/rig/paths.ts';
import { commandLines } from '../e2e/rig/readme.ts';
import { DEB_PACKAGE, debFileName } from './host-package/deb.mjs';
import { tarballBase } from './host-package/static.mjs';
import { extensionFiles } from './package.mjs';

/** An inline code span that is a command a reader may run (no placeholder such as `<version>` or `…`). */
const INLINE_COMMAND = /^(sudo )?(micoff-host|npm) [^<>…]*$/;

/** Every command of `text`: the lines of its fenced sh blocks, then its inline code spans that are commands. */
export function readmeCommands(text: string): string[] {
  const blocks: string[] = [];
  const prose: string[] = [];
  let fence: { close: string; sh: boolean; lines: string[] } | null = null;
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (fence === null) {
      const open = /^(`{3,})\s*(\w*)/.exec(t);
      if (open) fence = { close: open[1] ?? '```', sh: open[2] === 'sh' || open[2] === 'bash', lines: [] };
      else prose.push(line);
    } else if (t === fence.close) {
      if (fence.sh) blocks.push(...commandLines(fence.lines));
      fence = null;
    } else fence.lines.push(line);
  }
  if (fence !== null) throw new Error(`README: a fenced block (${fence.close}) never ends`);
  const inline = [...prose.join(' ').matchAll(/`([^`]+)`/g)]
    .map((m) => (m[1] ?? '').trim().replace(/\s+/g, ' '))
    .filter((s) => INLINE_COMMAND.test(s));
  return [...blocks, ...inline];
}

/** What the checks read from this checkout. */
export interface Checkout {
  /** package.json's `scripts`. */
  scripts: Record<string, string>;
  /** package.json's version: the one in every release file's name. */
  version: string;
  /** Whether a path relative to the checkout exists. */
  exists(rel: string): boolean;
  /** micoff-host's parser on `args` (with `--help`, so nothing runs): null when it accepts them, else why not. */
  hostParses(args: string[]): string | null;
  /** The demo's parser on `args` (the same way). */
  demoParses(args: string[]): string | null;
}

/** The files `npm run package` writes into dist/ for `version`. */
export function distFiles(version: string): string[] {
  const ext = extensionFiles(version);
  const tar = `${tarballBase(version)}.tar.gz`;
  return [ext.zip, ext.xpi, ext.crx, debFileName(version), tar, `${tar}.sha256`];
}

/** A command's words (no quoting in the README's commands: a quote is an error). */
function words(command: string): string[] {
  if (/["'\\$`|;&<>()]/.test(command)) throw new Error('shell syntax the check does not follow');
  return command.split(/\s+/).filter((w) => w !== '');
}

/** Why `command` does not work in `co` (what it names does not exist), or null when it does. */
export function checkCommand(command: string, co: Checkout): string | null {
  let w: string[];
  try {
    w = words(command);
  } catch (e) {
    return `${command}: ${(e as Error).message}`;
  }
  if (w[0] === 'sudo') w = w.slice(1);
  const why = (msg: string) => `${command}: ${msg}`;
  // Every release file a command names must be one `npm run package` writes for this version.
  for (const a of w) {
    const m = /^(?:\.\/)?dist\/(.+)$/.exec(a);
    if (m && !distFiles(co.version).includes(m[1] ?? ''))
      return why(`${a} is not a file \`npm run package\` writes (${distFiles(co.version).join(', ')})`);
  }
  const [program, ...args] = w;
  switch (program) {
    case 'micoff-host':
    case '~/.local/bin/micoff-host': {
      const e = co.hostParses(args);
      return e === null ? null : why(e);
    }
    case 'npm': {
      if (args[0] === 'test' && args.length === 1) return co.scripts.test ? null : why('no "test" script');
      if (args[0] !== 'run' || !args[1]) return why('not `npm test` or `npm run <script>`');
      const [, name, ...rest] = args;
      if (!co.scripts[name ?? '']) return why(`package.json has no script "${name}"`);
      if (rest.length === 0) return null;
      if (rest[0] !== '--') return why('options of an npm script come after `--`');
      if (name !== 'demo') return why(`nothing checks the options of \`npm run ${name}\``);
      const e = co.demoParses(rest.slice(1));
      return e === null ? null : why(e);
    }
    case 'bash': {
      const [script, ...opts] = args;
      if (!script || !co.exists(script)) return why(`${script ?? 'no script'} does not exist`);
      return opts.length === 0 ? null : why(`nothing checks the options of ${script}`);
    }
    case 'apt':
    case 'apt-get': {
      const [verb, ...what] = args;
      if (verb === 'install' && what.length === 1 && /^\.\/dist\//.test(what[0] ?? '')) return null;
      if ((verb === 'remove' || verb === 'purge') && what.length === 1 && what[0] === DEB_PACKAGE)
        return null;
      return why(
        `only \`apt install ./dist/<the .deb>\` and \`apt remove|purge ${DEB_PACKAGE}\` are checked`,
      );
    }
    default:
      return why(`no check for the program ${program}`);
  }
}

/** A parser's verdict from its exit status: null on 0, else its first line of stderr. */
function verdict(r: ReturnType<typeof spawnSync>, what: string): string | null {
  if (r.error) return `${what} could not run: ${r.error.message}`;
  if (r.status === 0) return null;
  const first = String(r.stderr ?? '')
    .split('\n')
    .find((l) => l.trim() !== '');
  return first ?? `${what} exited ${r.status}`;
}

/** This checkout, micoff-host being `host` (its parser answers `<args> --help` without running anything). */
export function thisCheckout(host: string): Checkout {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    version: string;
    scripts: Record<string, string>;
  };
  return {
    scripts: pkg.scripts,
    version: pkg.version,
    exists: (rel) => existsSync(join(ROOT, rel)),
    hostParses: (args) =>
      verdict(spawnSync(host, [...args, '--help'], { encoding: 'utf8', timeout: 10_000 }), 'micoff-host'),
    demoParses: (args) =>
      verdict(
        spawnSync(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts/demo.ts'), ...args, '--help'], {
          cwd: ROOT,
          encoding: 'utf8',
          timeout: 30_000,
        }),
        'scripts/demo.ts',
      ),
  };
}
