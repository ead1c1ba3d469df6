// UTF-8 bytes of a value as JSON, remembered per object: the request schema
// measures each metadata object against MAX_METADATA_BYTES, and the index
// keeps the same figure per row to size answers before it writes them.
// Stored metadata is never mutated, so the figure stays true.

const utf8 = new TextEncoder();
const measured = new WeakMap<object, number>();

export function jsonByteLength(value: unknown): number {
  const memo = typeof value === 'object' && value !== null;
  if (memo) {
    const known = measured.get(value);
    if (known !== undefined) return known;
  }
  const bytes = utf8.encode(JSON.stringify(value)).length;
  if (memo) measured.set(value, bytes);
  return bytes;
}
