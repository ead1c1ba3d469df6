// Row sets as bitmaps: one bit per row of [0, size), 32 rows per word.
// Filters combine postings with and/or/not word by word instead of
// visiting every row's metadata.

export class RowBitmap {
  readonly words: Uint32Array;

  constructor(readonly size: number) {
    this.words = new Uint32Array((size + 31) >>> 5);
  }

  static all(size: number): RowBitmap {
    const b = new RowBitmap(size);
    b.words.fill(0xffffffff);
    b.clearTail();
    return b;
  }

  static of(size: number, rows: ReadonlySet<number>): RowBitmap {
    const b = new RowBitmap(size);
    b.addAll(rows);
    return b;
  }

  copy(): RowBitmap {
    const b = new RowBitmap(this.size);
    b.words.set(this.words);
    return b;
  }

  has(row: number): boolean {
    return (this.words[row >>> 5] & (1 << (row & 31))) !== 0;
  }

  add(row: number): void {
    this.words[row >>> 5] |= 1 << (row & 31);
  }

  /** Add every row of `rows` (rows of [0, size)); a set of every row is filled word by word, not row by row. */
  addAll(rows: ReadonlySet<number>): void {
    if (rows.size === this.size) {
      this.words.fill(0xffffffff);
      this.clearTail();
      return;
    }
    for (const row of rows) this.words[row >>> 5] |= 1 << (row & 31);
  }

  and(other: RowBitmap): this {
    const w = this.words,
      o = other.words;
    for (let i = 0; i < w.length; i++) w[i] &= o[i];
    return this;
  }

  or(other: RowBitmap): this {
    const w = this.words,
      o = other.words;
    for (let i = 0; i < w.length; i++) w[i] |= o[i];
    return this;
  }

  not(): this {
    const w = this.words;
    for (let i = 0; i < w.length; i++) w[i] = ~w[i];
    this.clearTail();
    return this;
  }

  count(): number {
    let n = 0;
    const w = this.words;
    for (let i = 0; i < w.length; i++) {
      let x = w[i] - ((w[i] >>> 1) & 0x55555555);
      x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
      n += (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
    }
    return n;
  }

  /** The set rows in ascending order (the kernel then reads memory front to back). */
  rows(count = this.count()): Int32Array {
    const out = new Int32Array(count);
    let j = 0;
    const w = this.words;
    for (let i = 0; i < w.length; i++) {
      let x = w[i];
      while (x !== 0) {
        const low = x & -x;
        out[j++] = (i << 5) + 31 - Math.clz32(low);
        x ^= low;
      }
    }
    return out;
  }

  /** Rows at or past `size` in the last word stay clear. */
  private clearTail(): void {
    const extra = this.size & 31;
    if (extra) this.words[this.words.length - 1] &= (1 << extra) - 1;
  }
}
