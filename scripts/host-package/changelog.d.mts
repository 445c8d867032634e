// Types for changelog.mjs (imported by the tests beside it).
export function releaseEntry(changelogText: string, version: string): { version: string; date: string };
