// Types for rebuild-deb.mjs (imported by the tests beside it).
export function splitDebVersion(version: string): { upstream: string; revision: string };
export function rebuildDeb(
  deb: string,
  o: { revision: string; drop?: string[]; outDir: string; changelogMd: string },
): string;
