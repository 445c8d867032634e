// Types for scripts/package.mjs (imported by scripts/package.test.ts).
import type { KeyObject } from 'node:crypto';
export const CRX_KEY_ENV: string;
export function extensionFiles(version: string): { zip: string; xpi: string; crx: string };
export function zip(files: [string, Buffer][]): Buffer;
export function zipDir(dir: string): Buffer;
export function crx3(zipBytes: Buffer, privateKey: KeyObject): Buffer;
export function loadReleaseKey(pemPath: string, manifestKeyBase64: string): KeyObject;
export function publicKeyBase64(privateKey: KeyObject): string;
export function filesWithKey(dir: string, keyBase64: string): [string, Buffer][];
export const LOCAL_KEY_FILE: string;
export function localKeyPath(env?: Record<string, string | undefined>): string;
export function localKey(path: string): { key: KeyObject; created: boolean };
