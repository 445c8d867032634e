// The files both host packages (the .deb and the static tarball) ship beside the binary, each from its
// one writer: the man pages and shell completions from `micoff-dist` (native-host/crates/micoff-dist,
// generated from the command line the binary parses), the native messaging manifests from the host's
// own installer (`micoff-host install --target-dir`, through build.mjs's writeHostManifests).
import { execFileSync } from 'node:child_process';
import { basename, join } from 'node:path';
import { writeHostManifests } from '../build.mjs';

/** Which shell each of micoff-dist's completion files is for (clap_complete's file names). */
const COMPLETION_SHELLS = { 'micoff-host.bash': 'bash', '_micoff-host': 'zsh', 'micoff-host.fish': 'fish' };

/**
 * Man pages and completions of `distBin` into `outDir`: `{ man: [path...], completions: { bash, zsh,
 * fish } }`. Throws when micoff-dist fails or a shell's file is missing.
 */
export function generateDocs(distBin, outDir) {
  const listed = execFileSync(distBin, [outDir], { encoding: 'utf8' }).split('\n').filter(Boolean);
  const man = listed.filter((p) => p.endsWith('.1'));
  const completions = {};
  for (const p of listed) {
    const shell = COMPLETION_SHELLS[basename(p)];
    if (shell) completions[shell] = p;
  }
  for (const shell of Object.values(COMPLETION_SHELLS))
    if (!completions[shell]) throw new Error(`${distBin} wrote no ${shell} completion into ${outDir}`);
  if (!man.some((p) => basename(p) === 'micoff-host.1'))
    throw new Error(`${distBin} wrote no micoff-host.1 into ${outDir}`);
  return { man, completions };
}

/**
 * Everything the packages need beside the binary, generated under `outDir`: `generateDocs`'s and the
 * manifests `{ chromium, firefox }` pointing at `pathInManifest`.
 */
export function hostFiles({ hostBin, distBin, outDir, pathInManifest }) {
  return {
    ...generateDocs(distBin, join(outDir, 'docs')),
    manifests: writeHostManifests({ hostBin, root: join(outDir, 'manifests'), pathInManifest }),
  };
}
