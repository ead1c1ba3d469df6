// Child process of test/index/heap-size.test.ts (run with --expose-gc): stores
// thousands of vectors of each kind of metadata in a VectorIndex, as
// JSON-parsed bodies the way the server gets them, and prints, one JSON line
// per kind, the index's estimate of its JS heap beside the measured growth of
// heapUsed, and its metadataBytes beside the measured growth of ArrayBuffers.
// Each kind is stored once unmeasured, so code compiled on first use is not
// counted as data, then twice measured: the smaller growth is the data's (V8
// now and then keeps a few hundred KB more after a fill, optimized code or
// feedback, that the next fill does not repeat; and now and then frees some
// of an earlier kind's during one, which makes that growth negative: not used).
import type { Metadata } from '../../src/index/filter.js';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

/** Each kind's metadata of vector i, and how many vectors. */
export const METADATA_KINDS: Record<string, [(i: number) => Metadata | undefined, number]> = {
  none: [() => undefined, 20_000],
  small: [(i) => ({ kind: 'doc', n: i % 10 }), 10_000],
  unique256: [(i) => Object.fromEntries(Array.from({ length: 256 }, (_, k) => ['k' + k, `v${i}_${k}`])), 2000],
  uniqueNumbers: [(i) => ({ a: Array.from({ length: 500 }, (_, k) => i * 1000 + k + 0.5) }), 1000],
  longText: [(i) => ({ text: 'x'.repeat(8000) + i }), 2000],
  emptyObjects: [() => ({ a: Array.from({ length: 2000 }, () => ({})) }), 1000],
  twoByteText: [(i) => ({ t: '\u4e2d'.repeat(2500) + i }), 2000],
  nested: [(i) => ({ a: { b: { c: { d: i, e: 'x' + i } } }, tags: ['a', 'b', 'c' + (i % 100)] }), 5000],
  // Every key new, in each fill too (a key seen before is the same internalized string): the filter index's path cache holds each.
  uniqueKeys: [(i) => ({ [`key_${'k'.repeat(80)}${i}_${Math.random()}`]: i }), 3000],
};

const settle = () => {
  gc();
  gc();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  return { heapUsed, arrayBuffers };
};

const module = loadKernelModule();

function fill(kind: string, make: (i: number) => Metadata | undefined, count: number): VectorIndex {
  const index = new VectorIndex(module, count + 1);
  index.upsert([{ id: 'first', vector: [1, 2, 3, 4] }]);
  for (let i = 0; i < count; i += 100) {
    const body = JSON.stringify(
      Array.from({ length: Math.min(100, count - i) }, (_, j) => ({
        id: `id-${kind}-${String(i + j).padStart(8, '0')}`,
        vector: [1, 2, 3, 4],
        metadata: make(i + j),
      })),
    );
    index.upsert(JSON.parse(body));
  }
  return index;
}

const kept: VectorIndex[] = [];
/** Store `kind` and keep it: how much the heap and the ArrayBuffers grew, and the index. */
function measuredFill(kind: string, make: (i: number) => Metadata | undefined, count: number) {
  const before = settle();
  const index = fill(kind, make, count);
  const after = settle();
  kept.push(index);
  return { index, heap: after.heapUsed - before.heapUsed, arrayBuffers: after.arrayBuffers - before.arrayBuffers };
}

/** The smaller of two growths that are not negative (0 if neither is). */
function dataGrowth(a: number, b: number): number {
  if (a < 0) return Math.max(b, 0);
  if (b < 0) return a;
  return Math.min(a, b);
}

for (const [kind, [make, count]] of Object.entries(METADATA_KINDS)) {
  fill(kind, make, count).reset();
  const first = measuredFill(kind, make, count);
  const second = measuredFill(kind, make, count);
  console.log(
    JSON.stringify({
      kind,
      count,
      measured: dataGrowth(first.heap, second.heap),
      estimated: second.index.stats().heapBytes,
      arrayBuffersMeasured: second.arrayBuffers,
      metadataBytes: second.index.stats().metadataBytes,
    }),
  );
}
