// One keyword engine of bench:text, in a process of its own (so memory
// figures are its alone): `node --expose-gc --import tsx
// bench/lib/text-engine.ts <tempvec|minisearch|orama> <documents> <queries>`.
// Indexes the documents of text-data.ts with the standard analyzer's terms
// (the peers take it as their tokenizer, so all three index the same terms),
// then runs the 3-term queries one at a time (OR, BM25, top 10) and prints one
// JSON line: build time, memory per document, query times, the top ids.
import { create, insertMultiple, search } from '@orama/orama';
import MiniSearch from 'minisearch';
import { analyze } from '../../src/index/text/analyzer.js';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { median } from './measure.js';
import { documentText, keywordQueries } from './text-data.js';

const [engine, documentsArg, queriesArg] = process.argv.slice(2);
const count = Number(documentsArg),
  queryCount = Number(queriesArg);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

const tokenize = (text: string) => analyze('standard', text);
const texts = Array.from({ length: count }, (_, i) => documentText(i));
const queries = keywordQueries(queryCount);
const textBytes = texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);

/** Heap and array buffers in use, after a full collection. */
function memory(): number {
  gc!();
  gc!();
  const usage = process.memoryUsage();
  return usage.heapUsed + usage.arrayBuffers;
}

type Search = (query: string) => string[];

function tempvec(): Search {
  const index = new VectorIndex(loadKernelModule(), count);
  const BATCH = 1000;
  for (let i = 0; i < count; i += BATCH) {
    const records = texts.slice(i, i + BATCH).map((text, j) => ({ id: `d${i + j}`, vector: [1], text }));
    index.upsert(records, { analyzer: 'standard' });
  }
  return (query) => index.search([], { queryTexts: [query], topK: 10 }).results[0].map((hit) => hit.id);
}

function minisearch(): Search {
  const index = new MiniSearch<{ id: string; text: string }>({ fields: ['text'], tokenize, processTerm: (term) => term });
  index.addAll(texts.map((text, i) => ({ id: `d${i}`, text })));
  return (query) =>
    index
      .search(query, { combineWith: 'OR' })
      .slice(0, 10)
      .map((hit) => hit.id as string);
}

function orama(): Search {
  const db = create({
    schema: { text: 'string' } as const,
    components: { tokenizer: { language: 'english', normalizationCache: new Map(), tokenize } },
  });
  insertMultiple(
    db,
    texts.map((text, i) => ({ id: `d${i}`, text })),
    1000,
  );
  return (query) => {
    const answer = search(db, { term: query, properties: ['text'], limit: 10 });
    if (answer instanceof Promise) throw new Error('orama answered asynchronously');
    return answer.hits.map((hit) => hit.id);
  };
}

const before = memory();
const t0 = performance.now();
const run = ({ tempvec, minisearch, orama } as Record<string, () => Search>)[engine]();
const buildMs = performance.now() - t0;
const bytes = memory() - before;
for (const query of queries.slice(0, 20)) run(query); // warm-up
const times: number[] = [];
const tops: string[][] = [];
for (const query of queries) {
  const t1 = performance.now();
  tops.push(run(query));
  times.push(performance.now() - t1);
}
console.log(JSON.stringify({ engine, count, textBytes, buildMs, bytesPerDocument: bytes / count, queryMs: median(times), tops: tops.slice(0, 50) }));
