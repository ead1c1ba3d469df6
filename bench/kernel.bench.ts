// npm run bench:kernel: time per query of the WASM kernel's exact scan
// against a plain TypeScript loop over the same Float32Array data
// (cosine, top 10), for 10k and 100k vectors of 384 dimensions.
import { inverseNorm } from '../src/kernel/inverse-norm.js';
import { rowOf, uniformVectors } from './lib/data.js';
import { filledKernel } from './lib/kernel-setup.js';
import { fmt, interleave, printTable, quick } from './lib/measure.js';
import { writeResults } from './lib/results.js';
import { invNormsOf, plainSearch, sameIds } from './lib/plain.js';

const DIM = 384;
const K = 10;
const QUERIES = 8;
const sizes = quick ? [2_000] : [10_000, 100_000];

const rows: Record<string, string | number>[] = [];
for (const n of sizes) {
  const data = uniformVectors(n, DIM, 11);
  const queries = uniformVectors(QUERIES, DIM, 12);
  const kernel = filledKernel(data, DIM, 'cosine');
  const invNorms = invNormsOf(data, DIM, n);

  // Results must agree before any timing counts.
  for (let q = 0; q < QUERIES; q++) {
    const query = rowOf(queries, DIM, q);
    const wasm = kernel.search({ queries: query, queryCount: 1, k: K, count: n });
    const plain = plainSearch(data, DIM, n, invNorms, query, K, 'cosine');
    if (
      !sameIds(
        wasm.rows,
        plain.rows,
        wasm.scores,
        Array.from(plain.keys, (key) => key * inverseNorm(query)),
      )
    )
      throw new Error(`n=${n} query ${q}: WASM and plain results differ`);
  }

  let q = 0;
  const nextQuery = () => rowOf(queries, DIM, q++ % QUERIES);
  const [wasm, plain] = interleave([
    { name: 'wasm', run: () => kernel.search({ queries: nextQuery(), queryCount: 1, k: K, count: n }) },
    { name: 'plain-ts', run: () => plainSearch(data, DIM, n, invNorms, nextQuery(), K, 'cosine') },
  ]);
  rows.push({
    vectors: n,
    dim: DIM,
    'wasm ms/query': wasm.ms,
    'plain-ts ms/query': plain.ms,
    'wasm / plain-ts': fmt(wasm.ms / plain.ms),
    'speed-up': `${fmt(plain.ms / wasm.ms, 2)}x`,
  });
}
printTable(rows);
console.log(`results: ${writeResults('kernel', { topK: K, metric: 'cosine', rows })}`);
