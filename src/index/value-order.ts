// One order of the scalar values at a metadata path, shared by facets and
// ordered listings: numbers (ascending), then strings (by Unicode code point,
// as their UTF-8 bytes compare: no locale's collation), then false, true and
// null. An ISO-8601 date is a string, so dates written alike (same precision,
// same offset, e.g. all in Z) order as dates.
import { FALSE, NUMBER, STRING, TRUE } from './metadata/entry-key.js';
import type { PathValues } from './metadata/metadata-index.js';

/** A scalar metadata value (what a facet counts). */
export type ScalarValue = number | string | boolean | null;

/** Place of a value kind in the order: numbers first, null last. */
export function kindRank(kind: number): number {
  switch (kind) {
    case NUMBER:
      return 0;
    case STRING:
      return 1;
    case FALSE:
      return 2;
    case TRUE:
      return 3;
    default:
      return 4;
  }
}

/** Order of value entries `a` and `b` of one path: negative when `a` comes first. */
export function compareEntries(values: PathValues, a: number, b: number): number {
  const ka = values.valueKind(a),
    kb = values.valueKind(b);
  if (ka !== kb) return kindRank(ka) - kindRank(kb);
  if (ka === NUMBER) return values.numberOf(a) - values.numberOf(b);
  if (ka === STRING) return values.compareStrings(a, b);
  return 0;
}

/** The JSON value of a value entry. */
export function entryValue(values: PathValues, id: number): ScalarValue {
  switch (values.valueKind(id)) {
    case NUMBER:
      return values.numberOf(id);
    case STRING:
      return values.stringOf(id);
    case TRUE:
      return true;
    case FALSE:
      return false;
    default:
      return null;
  }
}
