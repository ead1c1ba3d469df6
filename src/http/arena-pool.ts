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

export class ArenaPool {
  private readonly spare: ArrayBuffer[] = [];

  /** A buffer of at least `bytes` (its contents are stale: the caller writes before it reads). */
  take(bytes: number): ArrayBuffer {
    const { spare } = this;
    // The smallest spare buffer that fits.
    let best = -1;
    for (let i = 0; i < spare.length; i++) {
      if (spare[i].byteLength >= bytes && (best < 0 || spare[i].byteLength < spare[best].byteLength)) best = i;
    }
    if (best < 0) return new ArrayBuffer(bytes);
    const found = spare[best];
    spare[best] = spare[spare.length - 1];
    spare.pop();
    return found;
  }

  /** Give back buffers no longer referenced by anything that will read them. */
  give(buffers: readonly ArrayBuffer[]): void {
    for (const buffer of buffers) {
      if (buffer.byteLength > MAX_SPARE_BYTES || this.spare.includes(buffer)) continue;
      this.spare.push(buffer);
      // Over the total, drop the smallest: the larger buffers fault in the most pages.
      while (this.spareBytes > MAX_SPARE_TOTAL) {
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
export class ArenaLease {
  private readonly taken: ArrayBuffer[] = [];

  constructor(private readonly pool: ArenaPool) {}

  take(bytes: number): ArrayBuffer {
    const buffer = this.pool.take(bytes);
    this.taken.push(buffer);
    return buffer;
  }

  release(): void {
    this.pool.give(this.taken);
    this.taken.length = 0;
  }
}
