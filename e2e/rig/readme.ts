// The README's install commands, as the e2e specs that follow the README run them: the fenced block
// after a `<!-- readme-install: NAME -->` line, its command lines without comments or blank lines.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './paths.ts';

export const README = join(ROOT, 'README.md');

/** The commands of a fenced sh block's lines: each line without its `# comment`, blank lines dropped. */
export function commandLines(lines: string[]): string[] {
  return lines.map((l) => l.replace(/\s+#.*$/, '').trim()).filter((l) => l !== '' && !l.startsWith('#'));
}

/** The command lines of README block `name` (from `text`, README.md by default). */
export function readmeBlock(name: string, text = readFileSync(README, 'utf8')): string[] {
  const marker = `<!-- readme-install: ${name} -->`;
  const lines = text.split('\n');
  const at = lines.findIndex((l) => l.trim() === marker);
  if (at < 0) throw new Error(`README: no ${marker}`);
  const open = lines[at + 1]?.trim() ?? '';
  if (!open.startsWith('```')) throw new Error(`README: ${marker} is not followed by a fenced block`);
  const close = lines.findIndex((l, i) => i > at + 1 && l.trim() === '```');
  if (close < 0) throw new Error(`README: the block after ${marker} never ends`);
  const commands = commandLines(lines.slice(at + 2, close));
  if (commands.length === 0) throw new Error(`README: the block after ${marker} has no command`);
  return commands;
}
