// Buffers for large request bodies (read-into.ts) and for the vectors of
// add / add-many bodies (vector-json.ts), handed back when the request is
// done and reused by a later one. A fresh buffer costs a page fault per 4 KB
// on first touch plus its zeroing: about 0.4 ms of the 1.3 ms it takes to
// read 1000 base64 vectors of 384 floats.
//
// Safe because nothing keeps these bytes past the request: parsing copies
// everything it keeps out of the body (strings, JSON.parse, decoded
// vectors), applyUpsert copies each vector into the session's linear memory
// in the request's synchronous route step, and a buffer is given back only
// after that step has finished (body.ts, after `await next()`).

/** The largest buffer kept between requests (bigger ones go to the GC), and the most bytes kept in all. */
export const MAX_SPARE_BYTES = 8 * 1024 * 1024;
const MAX_SPARE_TOTAL = 16 * 1024 * 1024;

/** What a pool holds: anything of a fixed size in bytes (an ArrayBuffer, a body's linear memory). */
export interface Sized {
  readonly byteLength: number;
}

const newArrayBuffer = (bytes: number) => new ArrayBuffer(bytes);

export class ArenaPool<T extends Sized = ArrayBuffer> {
  private readonly spare: T[] = [];

  constructor(
    /** Makes a new buffer of `bytes` when no spare one fits. */
    private readonly create: (bytes: number) => T = newArrayBuffer as unknown as (bytes: number) => T,
    /** The largest buffer kept between requests, and the most bytes kept in all. */
    private readonly maxSpare = MAX_SPARE_BYTES,
    private readonly maxSpareTotal = MAX_SPARE_TOTAL,
  ) {}

  /** A buffer of at least `bytes` (its contents are stale: the caller writes before it reads). */
  take(bytes: number): T {
    const { spare } = this;
    // The smallest spare buffer that fits.
    let best = -1;
    for (let i = 0; i < spare.length; i++) {
      if (spare[i].byteLength >= bytes && (best < 0 || spare[i].byteLength < spare[best].byteLength)) best = i;
    }
    if (best < 0) return this.create(bytes);
    const found = spare[best];
    spare[best] = spare[spare.length - 1];
    spare.pop();
    return found;
  }

  /** Give back buffers no longer referenced by anything that will read them. */
  give(buffers: readonly T[]): void {
    for (const buffer of buffers) {
      if (buffer.byteLength > this.maxSpare || this.spare.includes(buffer)) continue;
      this.spare.push(buffer);
      // Over the total, drop the smallest: the larger buffers fault in the most pages.
      while (this.spareBytes > this.maxSpareTotal) {
        const smallest = this.spare.reduce((min, b, i) => (b.byteLength < this.spare[min].byteLength ? i : min), 0);
        this.spare.splice(smallest, 1);
      }
    }
  }

  /** Bytes held for reuse. */
  get spareBytes(): number {
    return this.spare.reduce((sum, b) => sum + b.byteLength, 0);
  }
}

/** The buffers one request took from a pool; release() gives them all back once the request is done. */
export class ArenaLease<T extends Sized = ArrayBuffer> {
  private readonly taken: T[] = [];

  constructor(private readonly pool: ArenaPool<T>) {}

  take(bytes: number): T {
    const buffer = this.pool.take(bytes);
    this.taken.push(buffer);
    return buffer;
  }

  release(): void {
    this.pool.give(this.taken);
    this.taken.length = 0;
  }
}
