// npm run bench:text: keyword and hybrid search (issue 28). 50,000 chunks of
// about 150 words (~1 KB, bench/lib/text-data.ts) with 384-d vectors, added
// 500 at a time as base64, in fresh servers (the compiled dist/, as `npm
// start`): once with each chunk's text as a metadata value, then as `text`
// (indexed for keyword search) under the standard analyzer and under english,
// each while a neighbour session (1k x 384) searches every 20 ms. Then, on the
// english session, 3-term keyword queries, vector
// queries and hybrid queries (the same pairs), timed by the server (searchMs).
// Last, the keyword index alone beside MiniSearch and Orama, each in a
// process of its own, on the same documents and the same terms.
// Request bodies are built before any clock starts.
//
// Goals: keyword query p50 <= 2 ms server time; hybrid <= 1.2x (vector +
// keyword); postings and dictionary <= 1.0x the text's bytes; the fill with
// text <= 1.5x the fill with the same text as metadata; the neighbour's p99
// during it <= 50 ms.
//
// --quick: 5,000 chunks.
import { execFileSync } from 'node:child_process';
import { encodeFloat32Base64 } from '../src/schemas/base64-float32.js';
import { startChildServer, type ChildServer } from './lib/child-server.js';
import { neighbourLoop as timedNeighbour } from './lib/neighbour.js';
import { rowOf, uniformVectors } from './lib/data.js';
import { fmt, median, printTable, quick } from './lib/measure.js';
import { writeResults } from './lib/results.js';
import { documentText, keywordQueries } from './lib/text-data.js';

const N = quick ? 5_000 : 50_000;
const DIM = 384;
const BATCH = 500;
const NEIGHBOUR = 1_000;
const NEIGHBOUR_EVERY_MS = 20;
const QUERIES = 200;

const data = uniformVectors(N, DIM, 31);
const neighbourData = uniformVectors(NEIGHBOUR, DIM, 32);
const texts = Array.from({ length: N }, (_, i) => documentText(i));
const textBytes = texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
/** add-many bodies: the texts as a metadata value (analyzer null), or as `text` under `analyzer`. */
const bodiesOf = (analyzer: 'standard' | 'english' | null) =>
  Array.from({ length: N / BATCH }, (_, b) =>
    Buffer.from(
      JSON.stringify({
        ...(analyzer ? { analyzer } : {}),
        vectors: Array.from({ length: BATCH }, (_, j) => {
          const i = b * BATCH + j;
          const vector = encodeFloat32Base64(rowOf(data, DIM, i));
          return analyzer ? { id: `c${i}`, vector, text: texts[i] } : { id: `c${i}`, vector, metadata: { text: texts[i] } };
        }),
      }),
    ),
  );
const neighbourSearch = Buffer.from(JSON.stringify({ queryVector: Array.from(rowOf(neighbourData, DIM, 7)), topK: 10 }));
const queryTexts = keywordQueries(QUERIES);
const queryVectors = uniformVectors(QUERIES, DIM, 33);
const searchBodies = {
  keyword: queryTexts.map((queryText) => Buffer.from(JSON.stringify({ queryText, topK: 10 }))),
  vector: queryTexts.map((_, q) => Buffer.from(JSON.stringify({ queryVector: encodeFloat32Base64(rowOf(queryVectors, DIM, q)), topK: 10 }))),
  hybrid: queryTexts.map((queryText, q) => Buffer.from(JSON.stringify({ queryVector: encodeFloat32Base64(rowOf(queryVectors, DIM, q)), queryText, topK: 10 }))),
};

/** The neighbour's searches, timed until the returned stop(). */
const neighbourLoop = (server: ChildServer, token: string) => timedNeighbour(server, token, neighbourSearch, NEIGHBOUR_EVERY_MS);

async function fill(server: ChildServer, analyzer: 'standard' | 'english' | null) {
  const neighbour = (await server.post('/token', '')).token as string;
  for (let b = 0; b < NEIGHBOUR; b += 500) {
    await server.post(
      '/vectors/add-many',
      Buffer.from(
        JSON.stringify({
          vectors: Array.from({ length: 500 }, (_, j) => ({ id: `n${b + j}`, vector: encodeFloat32Base64(rowOf(neighbourData, DIM, b + j)) })),
        }),
      ),
      neighbour,
    );
  }
  const bodies = bodiesOf(analyzer);
  const token = (await server.post('/token', '')).token as string;
  const stop = neighbourLoop(server, neighbour);
  const t0 = performance.now();
  for (const body of bodies) await server.post('/vectors/add-many', body, token);
  const fillMs = performance.now() - t0;
  return { token, fillMs, neighbour: await stop() };
}

/** Server time (searchMs) of each body, interleaved kind by kind, query by query. */
async function searchTimes(server: ChildServer, token: string) {
  const times: Record<keyof typeof searchBodies, number[]> = { keyword: [], vector: [], hybrid: [] };
  let textMatched = 0;
  for (let q = 0; q < QUERIES; q++) {
    for (const kind of ['keyword', 'vector', 'hybrid'] as const) {
      const answer = await server.post('/search', searchBodies[kind][q], token);
      times[kind].push(answer.metrics.searchMs);
      if (kind === 'keyword') textMatched += answer.stats.textMatched;
    }
  }
  const ratios = times.hybrid.map((ms, q) => ms / (times.vector[q] + times.keyword[q]));
  return { times, hybridRatio: median(ratios), textMatched: textMatched / QUERIES };
}

// 1. The fills, each in a fresh server.
const fillAlone = async (analyzer: 'standard' | 'english' | null) => {
  const server = await startChildServer();
  try {
    return await fill(server, analyzer);
  } finally {
    await server.stop();
  }
};
const asMetadata = await fillAlone(null);
const asStandardText = await fillAlone('standard');
const { asText, stats, searches } = await (async () => {
  const server = await startChildServer();
  try {
    const filled = await fill(server, 'english');
    const { stats } = await server.get('/session', filled.token);
    return { asText: filled, stats, searches: await searchTimes(server, filled.token) };
  } finally {
    await server.stop();
  }
})();

console.log(`${N} chunks of ~150 words (${fmt(textBytes / N, 0)} bytes of text each) with ${DIM}-d float32 vectors, ${BATCH} a batch as base64`);
const fills = (
  [
    ['as metadata', asMetadata],
    ['as text, standard analyzer', asStandardText],
    ['as text, english analyzer', asText],
  ] as const
).map(([text, run]) => ({
  text,
  'fill s': fmt(run.fillMs / 1000, 2),
  'vs metadata': fmt(run.fillMs / asMetadata.fillMs, 2),
  'neighbour p50/p99/max ms': `${fmt(run.neighbour.p50, 1)} / ${fmt(run.neighbour.p99, 1)} / ${fmt(run.neighbour.max, 1)}`,
}));
printTable(fills);
console.log('searches below: on the english session');
const indexBytes = stats.textIndexBytes as number;
console.log(
  `\ntext store ${fmt(stats.textBytes / 2 ** 20, 1)} MiB, of which dictionary and postings ${fmt(indexBytes / 2 ** 20, 1)} MiB (${fmt(indexBytes / textBytes, 2)}x the text's ${fmt(textBytes / 2 ** 20, 1)} MiB), ${stats.textIndexTerms} terms`,
);
const p = (xs: number[], q: number) => [...xs].sort((a, b) => a - b)[Math.floor(q * (xs.length - 1))];
const queries = (['keyword', 'vector', 'hybrid'] as const).map((kind) => ({
  query: kind,
  'server p50 ms': fmt(median(searches.times[kind]), 3),
  'p99 ms': fmt(p(searches.times[kind], 0.99), 3),
}));
printTable(queries);
console.log(
  `keyword queries matched ${fmt(searches.textMatched, 0)} chunks on average; hybrid / (vector + keyword), median of pairs: ${fmt(searches.hybridRatio, 2)}`,
);

// 2. The keyword index beside MiniSearch and Orama.
const engines = ['tempvec', 'minisearch', 'orama'].map((engine) =>
  JSON.parse(
    execFileSync(
      process.execPath,
      ['--expose-gc', '--import', 'tsx', new URL('./lib/text-engine.ts', import.meta.url).pathname, engine, String(N), String(QUERIES)],
      { encoding: 'utf8', maxBuffer: 64 * 2 ** 20 },
    ),
  ),
);
const ours = engines[0];
const overlap = (tops: string[][]) =>
  tops.reduce((sum, top, q) => sum + top.filter((id) => ours.tops[q].includes(id)).length / Math.max(1, ours.tops[q].length), 0) / tops.length;
console.log("\nkeyword index alone, in-process, standard analyzer's terms for all (OR queries, top 10):");
const engineRows = engines.map((e) => ({
  engine: e.engine,
  'build s': fmt(e.buildMs / 1000, 2),
  'query p50 ms': fmt(e.queryMs, 3),
  'vs tempvec': fmt(e.queryMs / ours.queryMs, 2),
  'bytes/doc (heap + buffers)': fmt(e.bytesPerDocument, 0),
  'memory vs tempvec': fmt(e.bytesPerDocument / ours.bytesPerDocument, 2),
  'top-10 overlap with tempvec': fmt(overlap(e.tops), 2),
}));
printTable(engineRows);

const keywordP50 = median(searches.times.keyword);
console.log(
  `\ngoals: keyword p50 ${fmt(keywordP50, 3)} ms (<= 2); hybrid ${fmt(searches.hybridRatio, 2)}x vector + keyword (<= 1.2); dictionary and postings ${fmt(indexBytes / textBytes, 2)}x the text (<= 1.0);` +
    ` fill ${fmt(asStandardText.fillMs / asMetadata.fillMs, 2)}x (standard) and ${fmt(asText.fillMs / asMetadata.fillMs, 2)}x (english) the fill with text as metadata (<= 1.5);` +
    ` neighbour p99 ${fmt(asStandardText.neighbour.p99, 1)} and ${fmt(asText.neighbour.p99, 1)} ms during them (<= 50)`,
);
console.log(
  `results: ${writeResults('text', { documents: N, dim: DIM, textBytes, asMetadata, asStandardText, asText, stats, searches: { ...searches, times: undefined }, engines: engines.map((e) => ({ ...e, tops: undefined })), tables: { fills, queries, engines: engineRows } })}`,
);
