// npm run bench:filter: a filtered search through VectorIndex (metadata index
// -> row bitmap -> kernel scan of the matching rows) against the unfiltered
// search, at 100k x 384, interleaved in one process.
// Goals: a filter matching 1% costs <= 0.2x an unfiltered search; one
// matching everything <= 1.1x.
import { VectorIndex } from '../src/index/vector-index.js';
import { loadKernelModule } from '../src/kernel/load-node.js';
import { rowOf, uniformVectors } from './lib/data.js';
import { fmt, interleave, printTable, quick } from './lib/measure.js';
import { writeResults } from './lib/results.js';

const N = quick ? 5_000 : 100_000;
const DIM = 384;
const data = uniformVectors(N, DIM, 41);
const index = new VectorIndex(loadKernelModule(), N);
for (let start = 0; start < N; start += 1000) {
  const batch = [];
  for (let r = start; r < Math.min(N, start + 1000); r++) {
    batch.push({ id: `v${r}`, vector: rowOf(data, DIM, r), metadata: { kind: 'doc', bucket: r % 100, tenant: `t${r % 10}`, rank: r } });
  }
  index.upsert(batch);
}
const query = Array.from(uniformVectors(1, DIM, 42));

const cases = {
  none: undefined,
  '1% (bucket = 7)': { bucket: 7 },
  '0.5% ($in of 500 and $or)': { rank: { $in: Array.from({ length: N / 200 }, (_, i) => i * 200) }, $or: [{ tenant: 't0' }, { tenant: 't2' }] },
  '10% (tenant = t3)': { tenant: 't3' },
  '50% (bucket < 50)': { bucket: { $lt: 50 } },
  '100% (kind = doc)': { kind: 'doc' },
  '99% ($ne)': { bucket: { $ne: 7 } },
};
const names = Object.keys(cases) as (keyof typeof cases)[];
const matched: Record<string, number> = {};
for (const name of names) matched[name] = index.search([query], { filter: cases[name] }).stats.matched;

const timings = interleave(
  names.map((name) => ({ name, run: () => index.search([query], { filter: cases[name] }) })),
  { rounds: 7, targetMs: 100 },
);
const base = timings[0].ms;
const rows = timings.map((t) => ({
  filter: t.name,
  matched: matched[t.name],
  'ms/query': t.ms,
  'vs unfiltered': fmt(t.ms / base),
}));
printTable(rows);
console.log(`results: ${writeResults('filter', { vectors: N, dim: DIM, rows })}`);
