// Metadata filters. A filter is an object of metadata keys and the values
// they must match; all keys must match. A scalar matches by strict equality;
// when the metadata field is an array, it matches if it contains the value;
// an object or array filter value matches a deeply equal field.

export type Metadata = Record<string, unknown>;
export type Filter = Record<string, unknown>;

/** Plain-data deep equality for JSON values. */
export function jsonEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a)) {
    const bb = b as unknown[];
    return a.length === bb.length && a.every((x, i) => jsonEqual(x, bb[i]));
  }
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  if (ka.length !== kb.length) return false;
  return ka.every((k) => Object.hasOwn(b, k) && jsonEqual((a as Metadata)[k], (b as Metadata)[k]));
}

function fieldMatches(field: unknown, expected: unknown): boolean {
  if (jsonEqual(field, expected)) return true;
  return Array.isArray(field) && field.some((item) => jsonEqual(item, expected));
}

/** A predicate over metadata; built once per search. */
export function compileFilter(filter: Filter): (metadata: Metadata) => boolean {
  // Own keys only: "__proto__" and friends are plain data here.
  const entries = Object.keys(filter).map((key) => [key, filter[key]] as const);
  return (metadata) => entries.every(([key, expected]) => Object.hasOwn(metadata, key) && fieldMatches(metadata[key], expected));
}
