// npm run bench:facet: POST /vectors/facet and /vectors/list with orderBy as
// the index answers them (facet.ts, ordered-listing.ts), at 50k rows.
// Goal: a facet of a path with 10k distinct values over 50k rows under 5 ms.
// Also: a listing of all 50k rows page by page in a value's order, each page's
// cost beside a page in insertion order (a page must not sort every row).
import type { FacetOptions } from '../src/index/facet.js';
import type { ListOptions } from '../src/index/types.js';
import { VectorIndex } from '../src/index/vector-index.js';
import { loadKernelModule } from '../src/kernel/load-node.js';
import { runSteps } from '../src/limits/steps.js';
import { fmt, interleave, printTable, quick } from './lib/measure.js';
import { writeResults } from './lib/results.js';

const N = quick ? 5_000 : 50_000;
const DISTINCT = N / 5;
const index = new VectorIndex(loadKernelModule(), N);
const start = Date.UTC(2026, 0, 1);
for (let from = 0; from < N; from += 1000) {
  const batch = [];
  for (let r = from; r < Math.min(N, from + 1000); r++) {
    // A multiplicative shuffle, so values are not in insertion order.
    const spread = (r * 7919) % N;
    batch.push({
      id: `v${r}`,
      vector: [1 + (r % 7), 1 + (r % 11), 1],
      metadata: {
        value: `value-${spread % DISTINCT}`,
        n: spread % DISTINCT,
        cat: r % 20,
        tags: [`t${r % 7}`, `t${r % 13}`],
        at: new Date(start + spread * 60_000).toISOString(),
      },
    });
  }
  index.upsert(batch);
}

const facets: Record<string, FacetOptions> = {
  [`${DISTINCT} strings`]: { path: 'value', limit: 10 },
  [`${DISTINCT} strings, limit 1000`]: { path: 'value', limit: 1000 },
  [`${DISTINCT} numbers, filter 50%`]: { path: 'n', limit: 10, filter: { cat: { $lt: 10 } } },
  [`${DISTINCT} numbers, 8 ranges`]: {
    path: 'n',
    limit: 10,
    ranges: Array.from({ length: 8 }, (_, i) => ({ gte: (i * DISTINCT) / 8, lt: ((i + 1) * DISTINCT) / 8 })),
  },
  '20 numbers': { path: 'cat', limit: 10 },
  'arrays (19 strings)': { path: 'tags', limit: 10 },
};
/** Longest step between two pauses of a facet (what the event loop waits behind, at most, on the server). */
function longestStep(options: FacetOptions): number {
  const steps = index.facetSteps(options);
  let longest = 0;
  for (;;) {
    const t0 = performance.now();
    const step = steps.next();
    longest = Math.max(longest, performance.now() - t0);
    if (step.done) return longest;
  }
}
const facetTimings = interleave(
  Object.entries(facets).map(([name, options]) => ({ name, run: () => runSteps(index.facetSteps(options)) })),
  { rounds: 7, targetMs: 100 },
);
const facetRows = facetTimings.map((t) => ({
  facet: t.name,
  'ms/facet': fmt(t.ms),
  'longest step ms': fmt(longestStep(facets[t.name])),
  // The goal is the issue's: a facet as asked by default (limit 10); limit 1000 with every count tied is the heaviest case, shown beside it.
  goal: facets[t.name].limit === 10 && !facets[t.name].ranges && t.name.startsWith(`${DISTINCT}`) ? (t.ms < 5 ? 'met (< 5 ms)' : 'MISSED (< 5 ms)') : '-',
}));
printTable(facetRows);

/** Every page of a listing: total, mean and slowest page (the time of pages only); `writes`: one record replaced between pages. */
function listAll(options: Omit<ListOptions, 'limit' | 'cursor'>, limit: number, writes = false) {
  let cursor: string | undefined;
  let pages = 0,
    rows = 0,
    slowest = 0,
    writing = 0;
  const t0 = performance.now();
  do {
    const p0 = performance.now();
    const page = index.list({ ...options, limit, cursor });
    slowest = Math.max(slowest, performance.now() - p0);
    pages++;
    rows += page.vectors.length;
    cursor = page.nextCursor ?? undefined;
    if (writes) {
      const w0 = performance.now();
      const r = (pages * 7919) % N;
      index.upsert([{ id: `v${r}`, vector: [1, 1, 1], metadata: { value: 'x', n: -1, cat: 0, tags: [], at: new Date(start - r * 60_000).toISOString() } }]);
      writing += performance.now() - w0;
    }
  } while (cursor);
  const total = performance.now() - t0 - writing;
  return { rows, pages, total, slowest };
}
const listings: [string, Omit<ListOptions, 'limit' | 'cursor'>][] = [
  ['insertion order', {}],
  [`at (${N} distinct ISO dates) asc`, { orderBy: { path: 'at', direction: 'asc' } }],
  [`n (${DISTINCT} distinct numbers) desc`, { orderBy: { path: 'n', direction: 'desc' } }],
  ['cat (20 numbers, ties) asc', { orderBy: { path: 'cat', direction: 'asc' } }],
  ['n desc, filter 50%', { orderBy: { path: 'n', direction: 'desc' }, filter: { cat: { $lt: 10 } } }],
];
const listRow = (name: string, run: ReturnType<typeof listAll>) => ({
  listing: name,
  rows: run.rows,
  pages: run.pages,
  'ms in all': fmt(run.total, 1),
  'ms/page': fmt(run.total / run.pages),
  'slowest page ms': fmt(run.slowest),
});
const listRows = listings.map(([name, options]) => {
  const runs = [listAll(options, 100), listAll(options, 100), listAll(options, 100)].sort((a, b) => a.total - b.total);
  return listRow(name, runs[1]);
});
// A write between every two pages: no page takes its values from the last walk's run.
for (const [name, options] of listings.slice(1, 3)) listRows.push(listRow(`${name}, a write between pages`, listAll(options, 100, true)));
printTable(listRows);
console.log(`results: ${writeResults('facet', { rows: N, distinct: DISTINCT, tables: { facets: facetRows, listing: listRows } })}`);
