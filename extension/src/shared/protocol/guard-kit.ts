// The small combinators every checker in check-*.ts is made of, so that each shape has exactly one
// checker, and the value guards more than one of those files needs. Not part of the protocol's
// surface: ../protocol.ts does not re-export this file.
import type { StreamKind } from './audio.ts';
import { MAX_PID } from './constants.ts';
import { PHASES, type Phase } from './history.ts';
import type { LatencyBrowser } from './latency.ts';

export type Guard<T> = (v: unknown) => v is T;
export type Rec = Record<string, unknown>;

export const isRecord = (v: unknown): v is Rec => typeof v === 'object' && v !== null && !Array.isArray(v);
export const isString: Guard<string> = (v): v is string => typeof v === 'string';
export const isBool: Guard<boolean> = (v): v is boolean => typeof v === 'boolean';
export const isNumber: Guard<number> = (v): v is number => typeof v === 'number' && Number.isFinite(v);
export const isUint: Guard<number> = (v): v is number => Number.isSafeInteger(v) && (v as number) >= 0;
export const isPid: Guard<number> = (v): v is number => isUint(v) && v >= 1 && v <= MAX_PID;
export const nullable =
  <T>(g: Guard<T>): Guard<T | null> =>
  (v): v is T | null =>
    v === null || g(v);
/** Optional request field: absent, null or valid. */
export const optional = (g: (v: unknown) => boolean, v: unknown): boolean =>
  v === undefined || v === null || g(v);
export const arrayOf =
  <T>(g: Guard<T>): Guard<T[]> =>
  (v): v is T[] =>
    Array.isArray(v) && v.every(g);
export const oneOf =
  <T extends string>(...values: readonly T[]): Guard<T> =>
  (v): v is T =>
    typeof v === 'string' && (values as readonly string[]).includes(v);
export const inRange = (v: unknown, min: number, max: number): boolean => isUint(v) && v >= min && v <= max;
export const isLatencyBrowser = oneOf<LatencyBrowser>('chromium', 'chrome', 'firefox');
export const isPhase = oneOf<Phase>(...PHASES);
export const isStreamKind = oneOf<StreamKind>('record', 'playback');
/** An object whose listed fields all pass their guards (extra fields are allowed). */
export const shape =
  <T>(fields: { [K in keyof T]-?: Guard<T[K]> }): Guard<T> =>
  (v): v is T =>
    isRecord(v) && Object.entries(fields).every(([key, guard]) => (guard as Guard<unknown>)(v[key]));
