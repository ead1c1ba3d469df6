// npm run bench:retrieval: the search stages (src/index/search/stages.ts)
// against the plain search of the same query, through VectorIndex at 50k x
// 384, interleaved in one process; each stage exact over every row.
// Goals (issue 36): MMR over 2,048 candidates <= 1.5x the plain search;
// groupBy and decay over all 50k rows <= 1.3x.
import { VectorIndex } from '../src/index/vector-index.js';
import { loadKernelModule } from '../src/kernel/load-node.js';
import { rowOf, uniformVectors } from './lib/data.js';
import { fmt, interleave, pairedRatio, printTable, quick } from './lib/measure.js';
import { writeResults } from './lib/results.js';

const N = quick ? 5_000 : 50_000;
const DIM = 384;
const QUERIES = 8;
const DAY = 86_400_000;
const data = uniformVectors(N, DIM, 36);
const index = new VectorIndex(loadKernelModule(), N);
for (let start = 0; start < N; start += 1000) {
  const batch = [];
  for (let r = start; r < Math.min(N, start + 1000); r++) {
    const metadata = { group: `g${r % 1000}`, price: r % 977, at: new Date(Date.UTC(2026, 0, 1) + (r % 365) * DAY).toISOString() };
    batch.push({ id: `v${r}`, vector: rowOf(data, DIM, r), metadata });
  }
  index.upsert(batch);
}
const queries = Array.from({ length: QUERIES }, (_, j) => Array.from(uniformVectors(1, DIM, 100 + j)));
let call = 0;
const next = () => queries[call++ % QUERIES];

const cases = [
  { name: 'plain (topK 10)', options: {} },
  { name: 'mmr (2048 candidates, diversity 0.5)', options: { mmr: { diversity: 0.5, candidates: 2048 } }, goal: 1.5 },
  { name: 'groupBy (1000 values, size 3)', options: { groupBy: { path: 'group', size: 3 } }, goal: 1.3 },
  { name: 'decay (numbers, exp)', options: { decay: { path: 'price', origin: 500, scale: 100 } }, goal: 1.3 },
  { name: 'decay (dates, gauss)', options: { decay: { path: 'at', origin: '2026-06-01', scale: 30 * DAY, curve: 'gauss' as const } }, goal: 1.3 },
  { name: 'decay + groupBy', options: { decay: { path: 'price', origin: 500, scale: 100 }, groupBy: { path: 'group', size: 3 } } },
  { name: 'decay + mmr', options: { decay: { path: 'price', origin: 500, scale: 100 }, mmr: { diversity: 0.5, candidates: 2048 } } },
];
const search = (options: object) => (j: number) => index.search([queries[j % QUERIES]], { topK: 10, ...options });
const timings = interleave(
  cases.map((c) => ({ name: c.name, run: () => index.search([next()], { topK: 10, ...c.options }) })),
  { rounds: 5, targetMs: 60 },
);
// The ratio to the plain search from pairs of runs side by side (the median of their ratios), steadier than two medians on a shared machine.
const rows = timings.map((t, i) => {
  const c = cases[i];
  const ratio = i === 0 ? 1 : pairedRatio(search(cases[0].options), search(c.options), { pairs: quick ? 5 : 41, calls: 4 });
  return { case: t.name, 'ms/query': t.ms, 'vs plain': fmt(ratio), goal: c.goal ? `<= ${c.goal}x` : '', met: c.goal ? (ratio <= c.goal ? 'yes' : 'NO') : '' };
});
printTable(rows);
console.log(`results: ${writeResults('retrieval', { vectors: N, dim: DIM, tables: { stages: rows } })}`);
