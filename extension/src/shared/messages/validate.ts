// The shape checks every message contract uses (messages cross a trust boundary: page scripts can forge
// what the page world says, and the background trusts nothing it did not check).

export const MAX_TEXT = 200;

export function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A short string (labels, ids, reasons). */
export const isText = (v: unknown): v is string => typeof v === 'string' && v.length <= MAX_TEXT;

/** A small non-negative integer (track counts). */
export const isCount = (v: unknown): v is number =>
  Number.isInteger(v) && (v as number) >= 0 && (v as number) <= 1000;

/** A string or null (reasons), else undefined. */
export const textOrNull = (v: unknown): string | null | undefined =>
  v === null ? null : isText(v) ? v : undefined;

/** JSON text (at most `maxChars`) -> a plain object, or null. */
export function parseJsonRecord(raw: unknown, maxChars: number): Record<string, unknown> | null {
  if (typeof raw !== 'string' || raw.length > maxChars) return null;
  let v: unknown;
  try {
    v = JSON.parse(raw);
  } catch {
    return null;
  }
  return isRecord(v) ? v : null;
}
