// npm run bench:recall: retrieval by meaning on a paraphrase set (issue 35's
// goal). bench/data/paraphrases.json holds hand-written pairs (a stored
// sentence, a query that says the same in other words) and over 1,000 other
// sentences; all are stored by their text (use-lite-512) in one session of
// the compiled server (bench/lib/child-server.ts, as `npm start` runs it) and
// in a Node LocalIndex (build/sdk.js), then each query is searched by its text
// (topK 10): recall@1 and recall@10 in both, and the ids per query compared
// (a difference is reported with its score gap: a near-tie is < 1e-6), and
// the largest score difference where they agree.
// Keyword-only (queryText, BM25) and hybrid (both, RRF) recall for comparison.
import { readFileSync } from 'node:fs';
import { build } from '../scripts/build.js';
import { startChildServer, type ChildServer } from './lib/child-server.js';
import { printTable } from './lib/measure.js';
import { writeResults } from './lib/results.js';

type Sdk = typeof import('../src/sdk/index.js');
type LocalIndex = Awaited<ReturnType<Sdk['LocalIndex']['load']>>;
interface Hit {
  id: string;
  score: number;
}
type Mode = 'meaning' | 'keywords' | 'hybrid';

const TOP_K = 10;
/** Records per add-many: within MAX_EMBED_TEXTS' default (256), so one batch is one embedding request's worth. */
const BATCH = 250;
const NEAR_TIE = 1e-6;

const set = JSON.parse(readFileSync(new URL('./data/paraphrases.json', import.meta.url), 'utf8')) as {
  pairs: { stored: string; query: string }[];
  distractors: string[];
};
const records = [...set.pairs.map((p, i) => ({ id: `p${i}`, text: p.stored })), ...set.distractors.map((text, i) => ({ id: `d${i}`, text }))];
const queries = set.pairs.map((p) => p.query);

/** The search body (HTTP) of a query by meaning, by keywords or both. */
const body = (mode: Mode, text: string) => ({
  topK: TOP_K,
  ...(mode === 'keywords' ? {} : { queryVector: { text } }),
  ...(mode === 'meaning' ? {} : { queryText: text }),
});

async function overHttp(server: ChildServer, mode: Mode, token: string): Promise<Hit[][]> {
  const out: Hit[][] = [];
  for (const q of queries) out.push((await server.post('/search', JSON.stringify(body(mode, q)), token)).results);
  return out;
}

async function inLocalIndex(local: LocalIndex, mode: Mode): Promise<Hit[][]> {
  const out: Hit[][] = [];
  for (const q of queries) {
    const options = { topK: TOP_K };
    if (mode === 'keywords') out.push(local.searchText(q, options).results);
    else out.push((await local.search({ text: q }, mode === 'hybrid' ? { ...options, text: q } : options)).results);
  }
  return out;
}

/** Share of queries whose stored sentence is among the first k hits. */
const recallAt = (hits: Hit[][], k: number) => hits.filter((h, i) => h.slice(0, k).some((x) => x.id === `p${i}`)).length / hits.length;

/** The largest score difference between the two at the same rank where the ids agree. */
const maxScoreDiff = (a: Hit[][], b: Hit[][]) =>
  Math.max(0, ...a.flatMap((hits, q) => hits.flatMap((h, r) => (h.id === b[q][r]?.id ? [Math.abs(h.score - b[q][r].score)] : []))));

/** Queries whose ids differ between the two, with the smallest score gap around the first differing rank (a near-tie when < NEAR_TIE). */
function differences(a: Hit[][], b: Hit[][]) {
  const out: { query: number; rank: number; gap: number }[] = [];
  a.forEach((hits, q) => {
    const rank = hits.findIndex((h, r) => h.id !== b[q][r]?.id);
    if (rank < 0 && hits.length === b[q].length) return;
    const at = rank < 0 ? hits.length : rank;
    const around = [hits[at - 1], hits[at], b[q][at - 1], b[q][at]].filter(Boolean).map((h) => h.score);
    out.push({ query: q, rank: at, gap: Math.min(...around.flatMap((s, i) => around.slice(i + 1).map((t) => Math.abs(s - t)))) });
  });
  return out;
}

build(['sdk', 'embedding'], { log: (line) => console.error(line) });
const sdk: Sdk = await import(new URL('../build/sdk.js', import.meta.url).href);
const modes: Mode[] = ['meaning', 'keywords', 'hybrid'];
const server = await startChildServer();
const http = new Map<Mode, Hit[][]>();
try {
  const token = (await server.post('/token', '')).token as string;
  for (let i = 0; i < records.length; i += BATCH) {
    const answer = await server.post('/vectors/add-many', JSON.stringify({ vectors: records.slice(i, i + BATCH) }), token);
    if (answer.mutation?.added !== Math.min(BATCH, records.length - i)) throw new Error(`add-many answered ${JSON.stringify(answer).slice(0, 300)}`);
  }
  for (const mode of modes) http.set(mode, await overHttp(server, mode, token));
} finally {
  await server.stop();
}

const local = await sdk.LocalIndex.load();
for (let i = 0; i < records.length; i += BATCH) await local.addMany(records.slice(i, i + BATCH));
const rows = [];
const mismatches: Record<string, ReturnType<typeof differences>> = {};
for (const mode of modes) {
  const inPage = await inLocalIndex(local, mode);
  const over = http.get(mode) as Hit[][];
  mismatches[mode] = differences(over, inPage);
  const nearTies = mismatches[mode].filter((d) => d.gap < NEAR_TIE).length;
  rows.push({
    query: mode === 'meaning' ? 'by meaning (queryVector: {text})' : mode === 'keywords' ? 'keywords only (queryText, BM25)' : 'hybrid (both, RRF)',
    pairs: queries.length,
    stored: records.length,
    httpRecallAt1: recallAt(over, 1).toFixed(3),
    httpRecallAt10: recallAt(over, 10).toFixed(3),
    localRecallAt1: recallAt(inPage, 1).toFixed(3),
    localRecallAt10: recallAt(inPage, 10).toFixed(3),
    idsIdentical: `${queries.length - mismatches[mode].length}/${queries.length}`,
    nearTies,
    maxScoreDiff: maxScoreDiff(over, inPage).toExponential(1),
  });
}
console.log(`Paraphrase retrieval: ${queries.length} queries, ${records.length} stored sentences (${set.distractors.length} distractors), top ${TOP_K}:`);
printTable(rows);
const misses = (http.get('meaning') as Hit[][]).flatMap((h, i) =>
  h[0]?.id === `p${i}` ? [] : [{ query: queries[i], first: h[0]?.id, rankOfStored: h.findIndex((x) => x.id === `p${i}`) + 1 || null }],
);
writeResults('recall', { tables: { rows }, mismatches, misses });
const unexplained = Object.values(mismatches)
  .flat()
  .filter((d) => d.gap >= NEAR_TIE);
if (unexplained.length > 0) {
  console.error('Ids differ between HTTP and LocalIndex beyond near-ties:', JSON.stringify(mismatches));
  process.exitCode = 1;
}
