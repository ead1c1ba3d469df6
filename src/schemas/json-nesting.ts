// Nesting of JSON text read from its bytes, before JSON.parse builds it:
// brackets outside strings. A line or body nested a million levels deep is
// refused in O(bytes) without making a million arrays; firstTooDeep
// (json-shape.ts) still names the path, on a copy pruned below the limit.

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * The deepest nesting of JSON bytes (the outermost container is 1), read in
 * pieces. An upper bound of what JSON.parse makes: a duplicate key may drop
 * a deep value, never add one.
 */
export class NestingScan {
  deepest = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;

  scan(bytes: Uint8Array, start = 0, end = bytes.length): void {
    let { depth, inString, escaped, deepest } = this;
    for (let i = start; i < end; i++) {
      const c = bytes[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) inString = false;
      } else if (c === QUOTE) inString = true;
      else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
        if (++depth > deepest) deepest = depth;
      } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) depth--;
    }
    Object.assign(this, { depth, inString, escaped, deepest });
  }
}

/** Whether any container in `bytes` nests deeper than `maxDepth`. */
export function nestsDeeperThan(bytes: Uint8Array, maxDepth: number): boolean {
  const scan = new NestingScan();
  scan.scan(bytes);
  return scan.deepest > maxDepth;
}

/**
 * `bytes` with the content of every container at depth maxDepth + 1 left out
 * (`[…]` becomes `[]`): it parses to the same value down to that depth, so
 * firstTooDeep finds the same path, and builds at most maxDepth + 1 levels.
 */
export function pruneDeeperThan(bytes: Uint8Array, maxDepth: number): Uint8Array {
  const out = new Uint8Array(bytes.length);
  let n = 0;
  let from = 0; // start of the bytes to keep, -1 inside a pruned container
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const c = bytes[i];
    if (inString) {
      if (c === BACKSLASH) i++;
      else if (c === QUOTE) inString = false;
    } else if (c === QUOTE) inString = true;
    else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth === maxDepth + 1) {
        out.set(bytes.subarray(from, i + 1), n);
        n += i + 1 - from;
        from = -1;
      }
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      if (depth-- === maxDepth + 1) from = i;
    }
  }
  if (from >= 0) {
    out.set(bytes.subarray(from), n);
    n += bytes.length - from;
  }
  return out.subarray(0, n);
}
