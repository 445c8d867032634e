// Types for deb.mjs (imported by the tests beside it).
import type { Stats } from 'node:fs';
import type { HostFiles } from './host-files.d.mts';
export const DEB_PACKAGE: string;
export const DEB_REVISION: string;
export const DEB_ARCH: string;
export const MAINTAINER: string;
export const INSTALLED_HOST: string;
export const SYSTEM_MANIFESTS: {
  browser: string;
  flavor: 'chromium' | 'firefox';
  dir: string;
  link: boolean;
}[];
export const COMPLETION_PATHS: Record<'bash' | 'zsh' | 'fish', string>;
export const DOC_DIR: string;
export const PROTOCOL_DOC: string;
export const LINTIAN_OVERRIDES: string;
export const UNLISTED_DIRS: string[];
export const PREINST: string;
export function arArchive(members: [string, Buffer][], mtime: number): Buffer;
export function dataEntries(entries: { rel: string; st: Stats }[]): string[];
export function debVersion(version: string, revision?: string): string;
export function debFileName(version: string, revision?: string): string;
export function licenseHolder(licenseText: string): { years: string; holder: string };
export function copyrightText(licenseText: string): string;
export function rfc5322(date: string): string;
export function changelogDebianText(version: string, date: string): string;
export function controlText(o: {
  version: string;
  revision?: string;
  installedSizeKib: number;
  depends: string;
}): string;
export function stageTree(
  stage: string,
  o: {
    hostBin: string;
    files: HostFiles;
    licenseText: string;
    changelogMd: string;
    protocolMd: string;
    version: string;
    date: string;
  },
): void;
export function walk(stage: string): { rel: string; path: string; st: Stats }[];
export function installedSizeKib(entries: { st: Stats }[]): number;
export function md5sumsText(entries: { rel: string; path: string; st: Stats }[]): string;
export function shlibDepends(binary: string): string;
export function checkAgainstInstaller(hostBin: string): void;
export function packDeb(
  stage: string,
  o: { version: string; revision?: string; date: string; outDir: string },
): string;
export function lintian(deb: string): { errors: number; warnings: number; output: string } | null;
