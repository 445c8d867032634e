// What makes a host package the same bytes whenever it is built: one time stamp for every file (the
// release entry's date in CHANGELOG.md) and gzip without a name or time in its header.
import { gzipSync } from 'node:zlib';

/** Seconds since the epoch at 00:00 UTC of `date` (YYYY-MM-DD): the packages' SOURCE_DATE_EPOCH. */
export function epochOf(date) {
  return Date.parse(`${date}T00:00:00Z`) / 1000;
}

/** gzip -9n: maximum compression, no name or time stamp (what lintian and reproducible builds ask). */
export function gzip9n(bytes) {
  return gzipSync(bytes, { level: 9 });
}
