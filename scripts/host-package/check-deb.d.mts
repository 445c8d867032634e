// Types for check-deb.mjs (imported by the tests beside it).
export function listing(
  deb: string,
): { mode: string; owner: string; path: string; link: string | undefined }[];
export function checkDeb(deb: string, version: string): string[];
export function citedDocs(roff: string): string[];
