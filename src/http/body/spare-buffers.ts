// Spare body buffers (read.ts) and spare float blocks of the vector reader
// (vector-reader.ts), reused from one request to the next: a fresh buffer
// pays a page fault per 4 KB on first touch, plus its zeroing.
//
// Safe because nothing keeps these bytes past the request: parsing copies
// out what it keeps, applyUpsert copies each vector into the session's
// memory in the route's synchronous step, and buffers go back only after
// that step (index.ts, after `await next()`).

/** The largest buffer kept between requests (bigger ones go to the GC), and the most bytes kept in all. */
export const MAX_SPARE_BYTES = 8 * 1024 * 1024;
const MAX_SPARE_TOTAL = 16 * 1024 * 1024;

/** What SpareBuffers holds: anything of a fixed size in bytes (an ArrayBuffer, a body's linear memory). */
export interface Sized {
  readonly byteLength: number;
}

const newArrayBuffer = (bytes: number) => new ArrayBuffer(bytes);

/** Spare buffers, taken smallest-that-fits first. */
export class SpareBuffers<T extends Sized = ArrayBuffer> {
  private readonly spare: T[] = [];
  /** Buffers made and not yet dropped (spare or in use). */
  private live = 0;

  constructor(
    /** Makes a new buffer of `bytes` when no spare one fits. */
    private readonly create: (bytes: number) => T = newArrayBuffer as unknown as (bytes: number) => T,
    /** The largest buffer kept between requests, and the most bytes kept in all. */
    private readonly maxSpare = MAX_SPARE_BYTES,
    private readonly maxSpareTotal = MAX_SPARE_TOTAL,
    /** The most buffers in existence at once (see tryTake). */
    private readonly maxLive = Infinity,
  ) {}

  /** A buffer of at least `bytes` (its contents are stale: the caller writes before it reads). */
  take(bytes: number): T {
    const { spare } = this;
    // The smallest spare buffer that fits.
    let best = -1;
    for (let i = 0; i < spare.length; i++) {
      if (spare[i].byteLength >= bytes && (best < 0 || spare[i].byteLength < spare[best].byteLength)) best = i;
    }
    if (best < 0) {
      this.live++;
      return this.create(bytes);
    }
    const found = spare[best];
    spare[best] = spare[spare.length - 1];
    spare.pop();
    return found;
  }

  /** A buffer as take() gives, or null when none spare fits and maxLive buffers exist. */
  tryTake(bytes: number): T | null {
    if (this.live >= this.maxLive && !this.spare.some((b) => b.byteLength >= bytes)) return null;
    return this.take(bytes);
  }

  /** Give back buffers no longer referenced by anything that will read them. */
  give(buffers: readonly T[]): void {
    for (const buffer of buffers) {
      if (this.spare.includes(buffer)) continue;
      if (buffer.byteLength > this.maxSpare) {
        this.live--;
        continue;
      }
      this.spare.push(buffer);
      // Over the total, drop the smallest: the larger buffers fault in the most pages.
      while (this.spareBytes > this.maxSpareTotal) {
        const smallest = this.spare.reduce((min, b, i) => (b.byteLength < this.spare[min].byteLength ? i : min), 0);
        this.spare.splice(smallest, 1);
        this.live--;
      }
    }
  }

  /** Bytes held for reuse. */
  get spareBytes(): number {
    return this.spare.reduce((sum, b) => sum + b.byteLength, 0);
  }
}

/** The buffers one request took from its SpareBuffers; release() gives them all back once the request is done. */
export class BufferLease<T extends Sized = ArrayBuffer> {
  private readonly taken: T[] = [];

  constructor(private readonly spares: SpareBuffers<T>) {}

  take(bytes: number): T {
    const buffer = this.spares.take(bytes);
    this.taken.push(buffer);
    return buffer;
  }

  /** take(), or null when its SpareBuffers is at maxLive. */
  tryTake(bytes: number): T | null {
    const buffer = this.spares.tryTake(bytes);
    if (buffer) this.taken.push(buffer);
    return buffer;
  }

  release(): void {
    this.spares.give(this.taken);
    this.taken.length = 0;
  }
}
