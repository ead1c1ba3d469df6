// The rows of each dictionary entry (a path, or a value at a path), in typed
// arrays. A posting is one of:
//   - one row, kept inline (most values of an id-like field);
//   - a sorted list of rows in a block of a shared slab (blocks of 2^k rows,
//     freed blocks reused by size), while it is smaller than a bitmap;
//   - a bitmap of every row, once the list would be larger (more than one row
//     in 32): setting and clearing a row is then O(1), whatever its place.
// Filters OR postings into a RowBitmap; nothing here allocates per row.

import { PagedArray, pagedLength } from './paged-array.js';
import { grown, grownLength } from './typed-arrays.js';

const NONE = 0,
  SINGLE = 1,
  LIST = 2,
  BITMAP = 3;
/** The slab's pages (words): a block is at most one page, so a list longer than it is a bitmap. */
const SLAB_SHIFT = 16;
const SLAB_PAGE = 1 << SLAB_SHIFT;
const SLAB_MASK = SLAB_PAGE - 1;
/** A list this short stays a list whatever the row count (a bitmap of a tiny index gains nothing). */
const MIN_BITMAP_ROWS = 16;

export class RowPostings {
  private readonly kind = new PagedArray(Uint8Array);
  private readonly count = new PagedArray(Uint32Array);
  /** SINGLE: the row; LIST: the block's offset in the slab; BITMAP: the bitmap's slot in `bitmaps`. */
  private readonly ref = new PagedArray(Uint32Array);
  /** LIST: log2 of the block's capacity. */
  private readonly blockClass = new PagedArray(Uint8Array);
  /** The slab's pages: a block never spans two (see allocate). */
  private slabPages = [new Uint32Array(64)];
  private slabTop = 0;
  private slabBytes = 256;
  /** Per block class, the first free block (its first word links to the next), or -1. */
  private freeBlocks = new Int32Array(32).fill(-1);
  private bitmaps: (Uint32Array | null)[] = [];
  private freeBitmapSlots: number[] = [];
  private bitmapBytes = 0;

  /** Bytes of the typed arrays held. */
  get byteLength(): number {
    return (
      this.kind.byteLength +
      this.count.byteLength +
      this.ref.byteLength +
      this.blockClass.byteLength +
      this.slabBytes +
      this.freeBlocks.byteLength +
      this.bitmapBytes
    );
  }

  /**
   * The most its arrays can grow by (as allocated) when `rowEntries` rows are
   * added to postings, entry ids reach `idLimit` and the index goes from
   * `rowCount` rows to `rowsAfter`: per-id arrays, the slab (every list's block
   * may double), bitmaps grown to the new rows, and lists turned bitmaps.
   */
  growthUpper(idLimit: number, rowEntries: number, rowCount: number, rowsAfter: number): number {
    const ids = pagedLength(this.kind.length, idLimit) - this.kind.length;
    let bytes = 10 * ids;
    if (rowEntries === 0) return bytes;
    const longestList = Math.max(MIN_BITMAP_ROWS, rowsAfter / 32);
    const slabWords = this.slabTop + 2 * rowEntries + Math.min(2 * this.slabTop, 2 * longestList * rowEntries);
    // Each page may leave less than a block unused (a block never spans two pages).
    const skipped = Math.min(slabWords, (Math.ceil(slabWords / SLAB_PAGE) + 1) * 2 * longestList);
    bytes += 4 * (pagedLength(this.slabBytes >>> 2, slabWords + skipped) - (this.slabBytes >>> 2));
    const lastWord = Math.max(0, rowsAfter - 1) >>> 5;
    for (const bits of this.bitmaps) if (bits && bits.length <= lastWord) bytes += 4 * (grownLength(bits.length, lastWord + 1) - bits.length);
    // A list turns bitmap at rowCount / 32 rows: the slab holds that many per list that can.
    const turning = Math.min(rowEntries, Math.floor(this.slabTop / Math.max(MIN_BITMAP_ROWS - 1, rowCount / 32 - 1)));
    return bytes + turning * 4 * (((rowsAfter + 32) >>> 5) + 1);
  }

  /** Make room for entry ids below `limit`. */
  ensureIds(limit: number): void {
    this.kind.ensure(limit);
    this.count.ensure(limit);
    this.ref.ensure(limit);
    this.blockClass.ensure(limit);
  }

  countOf(id: number): number {
    return this.count.get(id);
  }

  /** Add `row` to the posting of `id`; `rowCount` (the index's rows) decides list or bitmap. */
  add(id: number, row: number, rowCount: number): void {
    const n = this.count.get(id);
    switch (this.kind.get(id)) {
      case NONE:
        this.kind.set(id, SINGLE);
        this.ref.set(id, row);
        break;
      case SINGLE: {
        const other = this.ref.get(id);
        const block = this.allocate(1);
        const page = this.pageOf(block),
          at = block & SLAB_MASK;
        page[at] = Math.min(other, row);
        page[at + 1] = Math.max(other, row);
        this.kind.set(id, LIST);
        this.ref.set(id, block);
        this.blockClass.set(id, 1);
        break;
      }
      case LIST:
        if (n + 1 >= MIN_BITMAP_ROWS && ((n + 1) * 32 > rowCount || n + 1 > SLAB_PAGE)) {
          this.toBitmap(id, rowCount);
          this.setBit(id, row);
        } else {
          this.insertInList(id, row);
        }
        break;
      case BITMAP:
        this.setBit(id, row);
        break;
    }
    this.count.set(id, n + 1);
  }

  /** Remove `row` (which the posting holds) from the posting of `id`. */
  remove(id: number, row: number, rowCount: number): void {
    const n = this.count.get(id) - 1;
    this.count.set(id, n);
    if (n === 0) {
      this.release(id);
      return;
    }
    switch (this.kind.get(id)) {
      case LIST: {
        const block = this.ref.get(id);
        const at = this.lowerBound(block, n + 1, row);
        const page = this.pageOf(block),
          start = block & SLAB_MASK;
        page.copyWithin(start + at, start + at + 1, start + n + 1);
        if (n === 1) {
          const last = page[start];
          this.free(block, this.blockClass.get(id));
          this.kind.set(id, SINGLE);
          this.ref.set(id, last);
        }
        break;
      }
      case BITMAP: {
        const bits = this.bitmaps[this.ref.get(id)]!;
        bits[row >>> 5] &= ~(1 << (row & 31));
        // Back to a list once the bitmap is four times what the list takes.
        if ((n * 128 < rowCount && n <= SLAB_PAGE / 2) || n < MIN_BITMAP_ROWS / 2) this.toList(id, n);
        break;
      }
    }
  }

  /** The row `from` of the posting of `id` is now `to` (a delete moved the last row into a hole). */
  move(id: number, from: number, to: number, rowCount: number): void {
    if (this.kind.get(id) === SINGLE) {
      this.ref.set(id, to);
      return;
    }
    this.remove(id, from, rowCount);
    this.add(id, to, rowCount);
  }

  /** Set the rows of the posting of `id` in `words` (a RowBitmap's). */
  orInto(id: number, words: Uint32Array): void {
    switch (this.kind.get(id)) {
      case SINGLE: {
        const row = this.ref.get(id);
        words[row >>> 5] |= 1 << (row & 31);
        return;
      }
      case LIST: {
        const block = this.ref.get(id),
          slab = this.pageOf(block),
          start = block & SLAB_MASK,
          end = start + this.count.get(id);
        for (let i = start; i < end; i++) words[slab[i] >>> 5] |= 1 << (slab[i] & 31);
        return;
      }
      case BITMAP: {
        const bits = this.bitmaps[this.ref.get(id)]!;
        const n = Math.min(bits.length, words.length);
        for (let i = 0; i < n; i++) words[i] |= bits[i];
        return;
      }
    }
  }

  /** Write the rows of the posting of `id` to `out` from `at` (room for countOf(id)); the number written. */
  rowsInto(id: number, out: Int32Array, at: number): number {
    switch (this.kind.get(id)) {
      case SINGLE:
        out[at] = this.ref.get(id);
        return 1;
      case LIST: {
        const block = this.ref.get(id),
          start = block & SLAB_MASK,
          n = this.count.get(id);
        out.set(this.pageOf(block).subarray(start, start + n), at);
        return n;
      }
      case BITMAP: {
        const bits = this.bitmaps[this.ref.get(id)]!;
        let n = at;
        for (let w = 0; w < bits.length; w++) {
          for (let word = bits[w]; word !== 0; word &= word - 1) out[n++] = (w << 5) + (31 - Math.clz32(word & -word));
        }
        return n - at;
      }
    }
    return 0;
  }

  /** How many rows of the posting of `id` are set in `words` (a RowBitmap's): a facet's count under a filter. */
  countIn(id: number, words: Uint32Array): number {
    switch (this.kind.get(id)) {
      case SINGLE: {
        const row = this.ref.get(id);
        return (words[row >>> 5] >>> (row & 31)) & 1;
      }
      case LIST: {
        const block = this.ref.get(id),
          slab = this.pageOf(block),
          start = block & SLAB_MASK,
          end = start + this.count.get(id);
        let n = 0;
        for (let i = start; i < end; i++) n += (words[slab[i] >>> 5] >>> (slab[i] & 31)) & 1;
        return n;
      }
      case BITMAP: {
        const bits = this.bitmaps[this.ref.get(id)]!;
        const m = Math.min(bits.length, words.length);
        let n = 0;
        for (let i = 0; i < m; i++) n += popcount(bits[i] & words[i]);
        return n;
      }
    }
    return 0;
  }

  /** Call `visit` with each row of the posting of `id` (ascending for lists and bitmaps). */
  forEachRow(id: number, visit: (row: number) => void): void {
    switch (this.kind.get(id)) {
      case SINGLE:
        visit(this.ref.get(id));
        return;
      case LIST: {
        const block = this.ref.get(id),
          slab = this.pageOf(block),
          start = block & SLAB_MASK,
          end = start + this.count.get(id);
        for (let i = start; i < end; i++) visit(slab[i]);
        return;
      }
      case BITMAP: {
        const bits = this.bitmaps[this.ref.get(id)]!;
        for (let w = 0; w < bits.length; w++) {
          for (let x = bits[w]; x !== 0; x &= x - 1) visit((w << 5) + 31 - Math.clz32(x & -x));
        }
        return;
      }
    }
  }

  /** Give back the storage of a posting that lost its last row. */
  private release(id: number): void {
    if (this.kind.get(id) === LIST) this.free(this.ref.get(id), this.blockClass.get(id));
    if (this.kind.get(id) === BITMAP) this.dropBitmap(this.ref.get(id));
    this.kind.set(id, NONE);
  }

  private dropBitmap(slot: number): void {
    this.bitmapBytes -= this.bitmaps[slot]!.byteLength;
    this.bitmaps[slot] = null;
    this.freeBitmapSlots.push(slot);
  }

  private insertInList(id: number, row: number): void {
    const n = this.count.get(id);
    let block = this.ref.get(id);
    const cls = this.blockClass.get(id);
    if (n === 1 << cls) {
      const bigger = this.allocate(cls + 1);
      this.pageOf(bigger).set(this.pageOf(block).subarray(block & SLAB_MASK, (block & SLAB_MASK) + n), bigger & SLAB_MASK);
      this.free(block, cls);
      block = bigger;
      this.ref.set(id, block);
      this.blockClass.set(id, cls + 1);
    }
    // Rows mostly arrive in ascending order: the append is the common case.
    const page = this.pageOf(block),
      start = block & SLAB_MASK;
    const at = n > 0 && page[start + n - 1] < row ? n : this.lowerBound(block, n, row);
    page.copyWithin(start + at + 1, start + at, start + n);
    page[start + at] = row;
  }

  private lowerBound(block: number, n: number, row: number): number {
    const page = this.pageOf(block),
      start = block & SLAB_MASK;
    let lo = 0,
      hi = n;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (page[start + mid] < row) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  private toBitmap(id: number, rowCount: number): void {
    const bits = new Uint32Array(((rowCount + 32) >>> 5) + 1);
    const block = this.ref.get(id),
      n = this.count.get(id);
    const page = this.pageOf(block),
      start = block & SLAB_MASK;
    for (let i = start; i < start + n; i++) bits[page[i] >>> 5] |= 1 << (page[i] & 31);
    this.free(block, this.blockClass.get(id));
    const slot = this.freeBitmapSlots.pop() ?? this.bitmaps.length;
    this.bitmaps[slot] = bits;
    this.bitmapBytes += bits.byteLength;
    this.kind.set(id, BITMAP);
    this.ref.set(id, slot);
  }

  private toList(id: number, n: number): void {
    const slot = this.ref.get(id);
    const bits = this.bitmaps[slot]!;
    let cls = 1;
    while (1 << cls < n) cls++;
    const block = this.allocate(cls);
    const page = this.pageOf(block);
    let j = block & SLAB_MASK;
    for (let w = 0; w < bits.length; w++) {
      let x = bits[w];
      while (x !== 0) {
        const low = x & -x;
        page[j++] = (w << 5) + 31 - Math.clz32(low);
        x ^= low;
      }
    }
    this.dropBitmap(slot);
    this.kind.set(id, LIST);
    this.ref.set(id, block);
    this.blockClass.set(id, cls);
  }

  private setBit(id: number, row: number): void {
    const slot = this.ref.get(id);
    let bits = this.bitmaps[slot]!;
    if (row >>> 5 >= bits.length) {
      const bigger = grown(bits, (row >>> 5) + 1);
      this.bitmapBytes += bigger.byteLength - bits.byteLength;
      this.bitmaps[slot] = bits = bigger;
    }
    bits[row >>> 5] |= 1 << (row & 31);
  }

  /** A block of 2^cls words: a freed one of that size, or new at the slab's top. */
  private allocate(cls: number): number {
    const head = this.freeBlocks[cls];
    if (head >= 0) {
      const next = this.pageOf(head)[head & SLAB_MASK];
      this.freeBlocks[cls] = next === 0xffffffff ? -1 : next;
      return head;
    }
    // A block that would span two pages starts the next page; the words skipped stay unused.
    if ((this.slabTop & SLAB_MASK) + (1 << cls) > SLAB_PAGE) this.slabTop = (this.slabTop + SLAB_MASK) & ~SLAB_MASK;
    const block = this.slabTop;
    this.slabTop += 1 << cls;
    this.growSlab();
    return block;
  }

  private free(block: number, cls: number): void {
    const head = this.freeBlocks[cls];
    this.pageOf(block)[block & SLAB_MASK] = head < 0 ? 0xffffffff : head;
    this.freeBlocks[cls] = block;
  }

  private pageOf(block: number): Uint32Array {
    return this.slabPages[block >>> SLAB_SHIFT];
  }

  /** Room up to slabTop: the first page doubled (at most a page copied), or a new page. */
  private growSlab(): void {
    const pages = this.slabPages;
    const first = pages[0];
    if (pages.length === 1 && this.slabTop > first.length) {
      pages[0] = grown(first, Math.min(this.slabTop, SLAB_PAGE));
      this.slabBytes += pages[0].byteLength - first.byteLength;
    }
    while (pages.length * SLAB_PAGE < this.slabTop) {
      pages.push(new Uint32Array(SLAB_PAGE));
      this.slabBytes += 4 * SLAB_PAGE;
    }
  }
}

/** Set bits of a 32-bit word. */
function popcount(word: number): number {
  let x = word - ((word >>> 1) & 0x55555555);
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (((x + (x >>> 4)) & 0x0f0f0f0f) * 0x01010101) >>> 24;
}
