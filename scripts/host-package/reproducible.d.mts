// Types for reproducible.mjs (imported by the tests beside it).
export function epochOf(date: string): number;
export function gzip9n(bytes: Buffer): Buffer;
