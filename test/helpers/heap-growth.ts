// Child process of test/index/heap-size.test.ts (run with --expose-gc): stores
// a few thousand vectors of each kind of metadata in a VectorIndex, as JSON-parsed bodies
// the way the server gets them, and prints the index's estimate of its heap
// beside the measured growth of heapUsed, one JSON line per kind.
import { VectorIndex, type Metadata } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

/** Each kind's metadata of vector i, and how many vectors (the heavy kinds fewer: about 30 MB each). */
export const METADATA_KINDS: Record<string, [(i: number) => Metadata | undefined, number]> = {
  none: [() => undefined, 20_000],
  small: [(i) => ({ kind: 'doc', n: i % 10 }), 10_000],
  unique256: [(i) => Object.fromEntries(Array.from({ length: 256 }, (_, k) => ['k' + k, `v${i}_${k}`])), 300],
  uniqueNumbers: [(i) => ({ a: Array.from({ length: 500 }, (_, k) => i * 1000 + k + 0.5) }), 200],
  longText: [(i) => ({ text: 'x'.repeat(8000) + i }), 2000],
  emptyObjects: [() => ({ a: Array.from({ length: 2000 }, () => ({})) }), 200],
  twoByteText: [(i) => ({ t: '\u4e2d'.repeat(2500) + i }), 2000],
  nested: [(i) => ({ a: { b: { c: { d: i, e: 'x' + i } } }, tags: ['a', 'b', 'c' + (i % 100)] }), 5000],
};

const settle = () => { gc(); gc(); return process.memoryUsage().heapUsed; };

const module = loadKernelModule();
const kept: VectorIndex[] = [];
for (const [kind, [make, count]] of Object.entries(METADATA_KINDS)) {
  const index = new VectorIndex(module, count + 1);
  index.upsert([{ id: 'first', vector: [1, 2, 3, 4] }]);
  const estimateBefore = index.heapBytes;
  const before = settle();
  for (let i = 0; i < count; i += 100) {
    const body = JSON.stringify(Array.from({ length: Math.min(100, count - i) }, (_, j) => ({
      id: `id-${kind}-${String(i + j).padStart(8, '0')}`, vector: [1, 2, 3, 4], metadata: make(i + j),
    })));
    index.upsert(JSON.parse(body));
  }
  const measured = settle() - before;
  kept.push(index);
  console.log(JSON.stringify({ kind, count, measured, estimated: index.heapBytes - estimateBefore }));
}
