// Where each region of a session's linear memory lives.
//
//   [0, base)            the module's static data (base = its __heap_base, 16-aligned)
//   vectors              capacity rows of `dim` float32, row i at vectors + i*dim*4
//   invNorms             capacity float32: 1/||row|| (cosine), unused for l2
//   seqs                 capacity uint32: insertion sequence of each row (tie-break)
//   scratch              per call: queries, row list, per-query heaps
//
// Vectors come first so that growing the capacity never moves them; only the
// two small per-row regions are copied up. Scratch is last and transient, so
// a bigger search only grows the memory and moves nothing.

export const PAGE_BYTES = 65536;
const FLOAT_BYTES = 4;

export interface Layout {
  dim: number;
  capacity: number;
  vectors: number;
  invNorms: number;
  seqs: number;
  scratch: number;
}

export const align16 = (n: number) => Math.ceil(n / 16) * 16;

export function layoutFor(base: number, dim: number, capacity: number): Layout {
  const vectors = align16(base);
  const invNorms = align16(vectors + capacity * dim * FLOAT_BYTES);
  const seqs = align16(invNorms + capacity * FLOAT_BYTES);
  const scratch = align16(seqs + capacity * 4);
  return { dim, capacity, vectors, invNorms, seqs, scratch };
}

/** Byte offsets inside the scratch region for one search call. */
export interface ScratchLayout {
  queries: number;
  rowList: number;
  outRows: number;
  outKeys: number;
  end: number;
}

export function scratchFor(layout: Layout, queryCount: number, rowListLength: number, k: number): ScratchLayout {
  const queries = layout.scratch;
  const rowList = align16(queries + queryCount * layout.dim * FLOAT_BYTES);
  const outRows = align16(rowList + rowListLength * 4);
  const outKeys = align16(outRows + queryCount * k * 4);
  const end = align16(outKeys + queryCount * k * 4);
  return { queries, rowList, outRows, outKeys, end };
}

export const pagesFor = (bytes: number) => Math.ceil(bytes / PAGE_BYTES);
