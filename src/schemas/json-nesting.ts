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
 * pieces, and a copy of them pruned below `maxDepth`: the content of every
 * container at depth maxDepth + 1 left out (`[…]` becomes `[]`). The depth
 * is an upper bound of what JSON.parse makes (a duplicate key may drop a
 * deep value, never add one); the copy parses to the same value down to
 * maxDepth + 1, so firstTooDeep finds the same path in it, and building it
 * makes at most maxDepth + 1 levels.
 */
export class NestingScan {
  deepest = 0;
  private depth = 0;
  private inString = false;
  private escaped = false;
  /** Runs of the bytes the pruned copy keeps (views, not copies). */
  private readonly kept: Uint8Array[] = [];
  /** Inside a container past maxDepth + 1's opening: its bytes are left out. */
  private pruning = false;

  constructor(private readonly maxDepth: number) {}

  /** `bytes[start, end)`, the next piece (pieces of one text, in order). */
  scan(bytes: Uint8Array, start = 0, end = bytes.length): void {
    const cut = this.maxDepth + 1;
    let { depth, inString, escaped, deepest } = this;
    let from = this.pruning ? -1 : start;
    for (let i = start; i < end; i++) {
      const c = bytes[i];
      if (inString) {
        if (escaped) escaped = false;
        else if (c === BACKSLASH) escaped = true;
        else if (c === QUOTE) inString = false;
      } else if (c === QUOTE) inString = true;
      else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
        if (++depth > deepest) deepest = depth;
        if (depth === cut) {
          this.kept.push(bytes.subarray(from, i + 1));
          from = -1;
        }
      } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
        if (depth-- === cut) from = i;
      }
    }
    if (from >= 0 && from < end) this.kept.push(bytes.subarray(from, end));
    this.pruning = from < 0;
    Object.assign(this, { depth, inString, escaped, deepest });
  }

  /** Whether a container nests deeper than maxDepth. */
  get tooDeep(): boolean {
    return this.deepest > this.maxDepth;
  }

  /** The bytes read, pruned below maxDepth + 1 (one copy). */
  pruned(): Buffer {
    return Buffer.concat(this.kept);
  }
}

/**
 * Whether `bytes` holds at most `limit` opening brackets, in strings or not: then nothing in it nests
 * deeper than `limit`, and no scan is needed. Found by Buffer.indexOf (memchr), so a body of numbers
 * with a bracket or two is settled in well under a microsecond (the byte scan took 7.5 us of an 8 KB
 * query vector, 7% of bench:http's floor).
 */
export function opensAtMost(bytes: Uint8Array, limit: number): boolean {
  const view = Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let count = 0;
  for (const open of [OPEN_ARRAY, OPEN_OBJECT]) {
    for (let at = view.indexOf(open); at >= 0; at = view.indexOf(open, at + 1)) if (++count > limit) return false;
  }
  return true;
}

/** `bytes` pruned below maxDepth + 1 (NestingScan.pruned), or null when nothing nests deeper than `maxDepth`. */
export function prunedIfTooDeep(bytes: Uint8Array, maxDepth: number): Buffer | null {
  if (opensAtMost(bytes, maxDepth)) return null;
  const scan = new NestingScan(maxDepth);
  scan.scan(bytes);
  return scan.tooDeep ? scan.pruned() : null;
}
