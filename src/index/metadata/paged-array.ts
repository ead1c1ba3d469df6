// A typed array that grows without copying what it holds: a first page that
// doubles up to PAGE elements (small sessions stay small), then whole pages
// added one at a time. The per-entry arrays of the filter index grow with the
// values a session stores (millions): doubling a flat array copied all of
// them in one step (about 70 ms at 2^21 entries for the index's arrays).

type Typed = Uint8Array | Int32Array | Uint32Array | Float64Array;

const PAGE_SHIFT = 16;
export const PAGE = 1 << PAGE_SHIFT;
const MASK = PAGE - 1;
const FIRST = 16;

/** The length a PagedArray of `length` has once it holds `limit` elements (the memory budget projects growth with it). */
export function pagedLength(length: number, limit: number): number {
  if (limit <= length) return length;
  if (limit > PAGE) return Math.ceil(limit / PAGE) * PAGE;
  let grownTo = Math.max(length, FIRST);
  while (grownTo < limit) grownTo *= 2;
  return grownTo;
}

export class PagedArray<T extends Typed> {
  private pages: T[];
  /** Elements held (all pages). */
  length: number;

  /** `fill`: the value of elements not yet set. */
  constructor(
    private readonly make: new (length: number) => T,
    private readonly fill = 0,
  ) {
    this.pages = [this.page(FIRST)];
    this.length = FIRST;
  }

  get byteLength(): number {
    return this.length * this.pages[0].BYTES_PER_ELEMENT;
  }

  get(i: number): number {
    return this.pages[i >>> PAGE_SHIFT][i & MASK];
  }

  set(i: number, value: number): void {
    this.pages[i >>> PAGE_SHIFT][i & MASK] = value;
  }

  /** Room for indexes below `limit`: the first page doubled (at most PAGE elements copied), or new pages. */
  ensure(limit: number): void {
    const length = pagedLength(this.length, limit);
    if (length === this.length) return;
    if (this.length < PAGE) {
      const first = this.page(Math.min(length, PAGE));
      first.set(this.pages[0]);
      this.pages[0] = first;
    }
    while (this.pages.length * PAGE < length) this.pages.push(this.page(PAGE));
    this.length = length;
  }

  /** Every element set to `value`. */
  fillAll(value: number): void {
    for (const page of this.pages) page.fill(value);
  }

  /** A new page, its elements `fill` (a zero fill is the allocation's own). */
  private page(length: number): T {
    const page = new this.make(length);
    if (this.fill !== 0) page.fill(this.fill);
    return page;
  }
}
