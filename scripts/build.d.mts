// Types for scripts/build.mjs (imported by scripts/build.test.ts).
// biome-ignore lint/suspicious/noExplicitAny: a manifest is free-form JSON
type Manifest = Record<string, any>;
export function deepMerge(base: unknown, overlay: unknown): unknown;
export function chromeIdFromKey(keyBase64: string): string;
export function encodePng(size: number, rgba: Buffer): Buffer;
export function buildManifest(browser: 'chrome' | 'firefox'): Manifest;
export function crc32(buf: Uint8Array): number;
export function extensionIds(): { chromeId: string; firefoxId: string };
export function writeHostManifests(o: {
  hostBin: string;
  root: string;
  pathInManifest?: string;
}): Record<'chromium' | 'firefox', string>;
