// Where each region of a session's linear memory lives.
//
//   [0, base)            the module's static data (base = its __heap_base, 16-aligned)
//   vectors              capacity rows of `dim` float32, row i at vectors + i*dim*4
//   codes                int8 storage only: capacity rows of `codeStride` int8
//   invNorms             capacity float32: 1/||row|| (cosine), unused for l2
//   seqs                 capacity uint32: insertion sequence of each row (tie-break)
//   scales               int8 only: capacity float32, max|row| / 127
//   sqNorms              int8 only: capacity float32, ||row||^2 (l2 first stage)
//   scratch              per call: queries, row list, per-query heaps
//
// Vectors come first so that growing the capacity never moves them; the
// other per-row regions are copied up. Scratch is last and transient, so
// a bigger search only grows the memory and moves nothing.

export const PAGE_BYTES = 65536;
const FLOAT_BYTES = 4;

export interface Layout {
  dim: number;
  capacity: number;
  /** Bytes of int8 codes per row; 0 for float32 storage. */
  codeStride: number;
  vectors: number;
  codes: number;
  invNorms: number;
  seqs: number;
  scales: number;
  sqNorms: number;
  scratch: number;
}

export const align16 = (n: number) => Math.ceil(n / 16) * 16;

/** int8 code bytes per row: dim padded to the kernel's 32-byte step (0 for float32). */
export const codeStrideFor = (dim: number, int8: boolean) => (int8 ? Math.ceil(dim / 32) * 32 : 0);

export function layoutFor(base: number, dim: number, capacity: number, codeStride = 0): Layout {
  const perRowInt8 = codeStride > 0 ? capacity * FLOAT_BYTES : 0;
  const vectors = align16(base);
  const codes = align16(vectors + capacity * dim * FLOAT_BYTES);
  const invNorms = align16(codes + capacity * codeStride);
  const seqs = align16(invNorms + capacity * FLOAT_BYTES);
  const scales = align16(seqs + capacity * 4);
  const sqNorms = align16(scales + perRowInt8);
  const scratch = align16(sqNorms + perRowInt8);
  return { dim, capacity, codeStride, vectors, codes, invNorms, seqs, scales, sqNorms, scratch };
}

/** The per-row regions after `vectors`, highest first (the order to move them up in). */
export function movableRegions(layout: Layout): { start: number; bytes: number; name: keyof Layout }[] {
  const cap = layout.capacity;
  const int8 = layout.codeStride > 0;
  return [
    { name: 'sqNorms' as const, start: layout.sqNorms, bytes: int8 ? cap * 4 : 0 },
    { name: 'scales' as const, start: layout.scales, bytes: int8 ? cap * 4 : 0 },
    { name: 'seqs' as const, start: layout.seqs, bytes: cap * 4 },
    { name: 'invNorms' as const, start: layout.invNorms, bytes: cap * 4 },
    { name: 'codes' as const, start: layout.codes, bytes: cap * layout.codeStride },
  ];
}

/**
 * The most queries the kernel scores in one pass over the rows: its
 * TILE_PASS_QUERIES (assembly/tiles.ts; test/kernel/layout.test.ts holds the
 * two equal). Scratch is laid out before the kernel is instantiated, so the
 * number is written here too.
 */
export const TILE_PASS_QUERIES = 16;

/** Byte offsets inside the scratch region for one search call. */
export interface ScratchLayout {
  queries: number;
  rowList: number;
  outRows: number;
  outKeys: number;
  /** Up to TILE_PASS_QUERIES queries interleaved by 4-float chunk for the kernel's query tiles (0 bytes below 4 queries). */
  block: number;
  /**
   * One query only (0 bytes otherwise). `keys`: every scanned row's key (a
   * large top k selected after the scan) or key bound (searchL2Bounded);
   * searchL2Bounded's also: the rows listed for its exact pass, a pool of 2k.
   */
  keys: number;
  list: number;
  poolRows: number;
  poolKeys: number;
  end: number;
}

/**
 * `keyRows`: the rows a single query stores the keys of (0: none); `bounded`:
 * it takes searchL2Bounded, which also lists up to `keyRows` rows.
 */
export function scratchFor(layout: Layout, queryCount: number, rowListLength: number, k: number, keyRows = 0, bounded = false): ScratchLayout {
  const queries = layout.scratch;
  const rowList = align16(queries + queryCount * layout.dim * FLOAT_BYTES);
  // One k more than the results: a single-query scan selects through a
  // buffer of 2k entries that runs into the next query's (later) slots.
  const outRows = align16(rowList + rowListLength * 4);
  const outKeys = align16(outRows + (queryCount + 1) * k * 4);
  const block = align16(outKeys + (queryCount + 1) * k * 4);
  const keys = align16(block + Math.min(queryCount & ~3, TILE_PASS_QUERIES) * layout.dim * FLOAT_BYTES);
  const list = align16(keys + Math.ceil(keyRows / 4) * 16);
  const poolRows = align16(list + (bounded ? keyRows * 4 : 0));
  const poolKeys = align16(poolRows + (bounded ? 2 * k * 4 : 0));
  const end = align16(poolKeys + (bounded ? 2 * k * 4 : 0));
  return { queries, rowList, outRows, outKeys, block, keys, list, poolRows, poolKeys, end };
}

/**
 * Scratch of the int8 first stage: the query widened to i16, a row list, a
 * selection buffer of 2 x pool entries and, for a large pool, the key of
 * each of `keyCount` scanned rows (rounded up to 4; 0 for none).
 */
export function int8ScratchFor(layout: Layout, rowListLength: number, pool: number, keyCount = 0) {
  const query16 = layout.scratch;
  const rowList = align16(query16 + layout.codeStride * 2);
  const outRows = align16(rowList + rowListLength * 4);
  const outKeys = align16(outRows + 2 * pool * 4);
  const keys = align16(outKeys + 2 * pool * 4);
  const end = align16(keys + Math.ceil(keyCount / 4) * 16);
  return { query16, rowList, outRows, outKeys, keys, end };
}

export const pagesFor = (bytes: number) => Math.ceil(bytes / PAGE_BYTES);
