// Types for static.mjs (imported by the tests beside it).
import type { HostFiles } from './host-files.d.mts';
export const MUSL_TARGET: string;
export function tarballBase(version: string): string;
export function elfRuntimeNeeds(bytes: Buffer): { interpreter: string | null; needed: number };
export function libpulsePrefix(targetDir: string): string;
export function staticHostPath(targetDir: string): string;
export function buildStaticHost(root: string, targetDir: string): string;
export function checkStatic(binary: string, version: string): void;
export function sha256Line(name: string, bytes: Buffer): string;
export function readmeText(version: string, pulseSources: string[]): string;
export function thirdPartyText(pulseSources: string[]): string;
export function writeTarball(o: {
  stageRoot: string;
  outDir: string;
  version: string;
  date: string;
  binary: string;
  files: Omit<HostFiles, 'manifests'> & Partial<Pick<HostFiles, 'manifests'>>;
  licenseText: string;
  changelogMd: string;
  protocolMd: string;
  prefix: string;
}): { tarball: string; sumFile: string };
