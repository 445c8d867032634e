// Types for host-files.mjs (imported by the tests beside it).
export type HostFiles = {
  man: string[];
  completions: Record<'bash' | 'zsh' | 'fish', string>;
  manifests: Record<'chromium' | 'firefox', string>;
};
export function generateDocs(distBin: string, outDir: string): Omit<HostFiles, 'manifests'>;
export function hostFiles(o: {
  hostBin: string;
  distBin: string;
  outDir: string;
  pathInManifest: string;
}): HostFiles;
