// CHANGELOG.md's release entry: the first `## [<version>] - <YYYY-MM-DD>` heading. The host packages
// take their date from it (the Debian changelog's, every file's time stamp: reproducible.mjs), and a
// version is packaged only once its entry is written.

const HEADING = /^## \[([^\]]+)\] - (\d{4}-\d{2}-\d{2})\s*$/m;

/** `{ version, date }` of CHANGELOG.md's first entry; throws unless it is `version`'s. */
export function releaseEntry(changelogText, version) {
  const m = HEADING.exec(changelogText);
  if (!m) throw new Error('CHANGELOG.md has no `## [<version>] - <YYYY-MM-DD>` entry');
  const [, entryVersion, date] = m;
  if (entryVersion !== version)
    throw new Error(
      `CHANGELOG.md's first entry is ${entryVersion}, not package.json's ${version}: write the release's entry first`,
    );
  if (Number.isNaN(Date.parse(`${date}T00:00:00Z`))) throw new Error(`CHANGELOG.md: ${date} is not a date`);
  return { version, date };
}
