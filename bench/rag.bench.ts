// npm run bench:rag: the session LangChain programs make (issue 24). One
// session of 50,000 x 384 float32 vectors added 500 at a time as base64, each
// with about 1.5 KB of metadata JSON (a chunk's ~1 KB text and 40 short
// fields: a few unique per chunk, most from small sets), while a neighbour
// session (1k x 384) searches every 20 ms. The same fill without metadata
// runs first, each in a fresh server (the compiled dist/, as `npm start`).
// Then 8 clients run filtered searches with includeMetadata on the full
// session while the neighbour keeps searching.
// Request bodies are built before any clock starts.
//
// Goals: RSS growth <= 1.5x the bytes stored (vectors + metadata JSON); fill
// <= 2x the fill without metadata; the neighbour's p99 <= 50 ms during the
// fill and <= 20 ms during the filtered searches.
//
// --baseline <dir>: also run the server of another checkout (built, with its
// own dist/), in the same run, for a before/after comparison.
// --quick: 5,000 vectors.
import { encodeFloat32Base64 } from '../src/schemas/base64-float32.js';
import { startChildServer, type ChildServer } from './lib/child-server.js';
import { neighbourLoop as timedNeighbour } from './lib/neighbour.js';
import { rowOf, uniformVectors } from './lib/data.js';
import { chunkMetadata } from './lib/rag-data.js';
import { fmt, printTable, quick } from './lib/measure.js';
import { writeResults } from './lib/results.js';

const N = quick ? 5_000 : 50_000;
const DIM = 384;
const BATCH = 500;
const NEIGHBOUR = 1_000;
const NEIGHBOUR_EVERY_MS = 20;
const SEARCH_CLIENTS = 8;
const SEARCH_MS = quick ? 2_000 : 5_000;
const baselineAt = process.argv.indexOf('--baseline');
const baselineDir = baselineAt > 0 ? process.argv[baselineAt + 1] : null;

const data = uniformVectors(N, DIM, 24);
const neighbourData = uniformVectors(NEIGHBOUR, DIM, 25);
const bodiesOf = (withMetadata: boolean) =>
  Array.from({ length: N / BATCH }, (_, b) =>
    Buffer.from(
      JSON.stringify({
        vectors: Array.from({ length: BATCH }, (_, j) => {
          const i = b * BATCH + j;
          return withMetadata
            ? { id: `c${i}`, vector: encodeFloat32Base64(rowOf(data, DIM, i)), metadata: chunkMetadata(i) }
            : { id: `c${i}`, vector: encodeFloat32Base64(rowOf(data, DIM, i)) };
        }),
      }),
    ),
  );
let metadataJsonBytes = 0;
for (let i = 0; i < N; i++) metadataJsonBytes += Buffer.byteLength(JSON.stringify(chunkMetadata(i)));
const vectorBytes = N * DIM * 4;
const neighbourSearch = Buffer.from(JSON.stringify({ queryVector: Array.from(rowOf(neighbourData, DIM, 7)), topK: 10 }));
const filteredSearches = [
  { filter: { source: 'docs/report-7.pdf' }, topK: 10, includeMetadata: true },
  { filter: { page: { $lt: 30 }, field3: 2 }, topK: 10, includeMetadata: true },
  { filter: { 'loc.lines.from': { $gte: 500 }, field1: { $in: ['v1', 'v2'] } }, topK: 10, includeMetadata: true },
  { filter: { $or: [{ field0: 0 }, { chunk: { $lt: 100 } }] }, topK: 10, includeMetadata: true },
].map((options, k) => Buffer.from(JSON.stringify({ queryVector: Array.from(rowOf(data, DIM, 100 + k)), ...options })));

/** The server's process.memoryUsage(), where its bench routes have it. */
async function memoryUsage(server: ChildServer): Promise<NodeJS.MemoryUsage | null> {
  return server.get('/bench/memory').catch(() => null);
}

/** The neighbour's searches, timed until the returned stop(). */
const neighbourLoop = (server: ChildServer, token: string) => timedNeighbour(server, token, neighbourSearch, NEIGHBOUR_EVERY_MS);

interface Run {
  server: string;
  metadata: boolean;
  fillMs: number;
  rssGrowth: number;
  /** Growth of process.memoryUsage() fields over the fill (null for a server without GET /bench/memory). */
  memory: { heapTotal: number; heapUsed: number; arrayBuffers: number } | null;
  stats: Record<string, number>;
  fill: { p50: number; p99: number; max: number; count: number };
  searches?: { p50: number; p99: number; max: number; count: number; perSecond: number };
}

async function run(name: string, withMetadata: boolean, script?: string): Promise<Run> {
  const bodies = bodiesOf(withMetadata);
  const server = await startChildServer({}, undefined, script);
  try {
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
    const token = (await server.post('/token', '')).token as string;
    const rssBefore = server.rss().current;
    const memoryBefore = await memoryUsage(server);
    const stopNeighbour = neighbourLoop(server, neighbour);
    const t0 = performance.now();
    for (const body of bodies) await server.post('/vectors/add-many', body, token);
    const fillMs = performance.now() - t0;
    const fill = await stopNeighbour();
    const rssGrowth = server.rss().current - rssBefore;
    const memoryAfter = await memoryUsage(server);
    const memory =
      memoryAfter && memoryBefore
        ? {
            heapTotal: memoryAfter.heapTotal - memoryBefore.heapTotal,
            heapUsed: memoryAfter.heapUsed - memoryBefore.heapUsed,
            arrayBuffers: memoryAfter.arrayBuffers - memoryBefore.arrayBuffers,
          }
        : null;
    const { stats } = await server.get('/session', token);
    let searches: Run['searches'];
    if (withMetadata) {
      const stop = neighbourLoop(server, neighbour);
      let count = 0;
      const end = performance.now() + SEARCH_MS;
      await Promise.all(
        Array.from({ length: SEARCH_CLIENTS }, async (_, c) => {
          while (performance.now() < end) {
            await server.post('/search', filteredSearches[(c + count) % filteredSearches.length], token);
            count++;
          }
        }),
      );
      searches = { ...(await stop()), perSecond: count / (SEARCH_MS / 1000) };
    }
    return { server: name, metadata: withMetadata, fillMs, rssGrowth, memory, stats, fill, searches };
  } finally {
    await server.stop();
  }
}

const runs: Run[] = [];
const servers: [string, string | undefined][] = [['this tree', undefined]];
if (baselineDir) servers.push([`baseline (${baselineDir})`, `${baselineDir}/bench/lib/server-process.mjs`]);
for (const [name, script] of servers) {
  runs.push(await run(name, false, script));
  runs.push(await run(name, true, script));
}

const MiB = (x: number) => fmt(x / 2 ** 20, 1);
const stored = (r: Run) => vectorBytes + (r.metadata ? metadataJsonBytes : 0);
console.log(
  `${N} x ${DIM} float32, ${BATCH} a batch as base64; metadata ${fmt(metadataJsonBytes / N / 1024, 2)} KB JSON a vector; neighbour ${NEIGHBOUR} x ${DIM} searched every ${NEIGHBOUR_EVERY_MS} ms`,
);
const rows = runs.map((r) => {
  const plain = runs.find((o) => o.server === r.server && !o.metadata)!;
  return {
    server: r.server,
    metadata: r.metadata ? '~1.5 KB' : 'none',
    'fill s': fmt(r.fillMs / 1000, 2),
    'fill vs none': fmt(r.fillMs / plain.fillMs, 2),
    'RSS growth MiB': MiB(r.rssGrowth),
    'RSS / stored': fmt(r.rssGrowth / stored(r), 2),
    'heap MiB': MiB(r.stats.heapBytes),
    'heapTotal / ArrayBuffers growth MiB': r.memory ? `${MiB(r.memory.heapTotal)} / ${MiB(r.memory.arrayBuffers)}` : '-',
    'metadata store MiB': MiB(r.stats.metadataBytes ?? 0),
    'neighbour p50/p99/max ms': `${fmt(r.fill.p50, 1)} / ${fmt(r.fill.p99, 1)} / ${fmt(r.fill.max, 1)}`,
  };
});
printTable(rows);
const searchRows = runs
  .filter((r) => r.searches)
  .map((r) => ({
    server: r.server,
    'filtered searches /s': fmt(r.searches!.perSecond, 1),
    'neighbour p50/p99/max ms': `${fmt(r.searches!.p50, 1)} / ${fmt(r.searches!.p99, 1)} / ${fmt(r.searches!.max, 1)}`,
  }));
console.log(`\n${SEARCH_CLIENTS} clients running filtered searches with includeMetadata on the full session for ${SEARCH_MS / 1000} s:`);
printTable(searchRows);
const mine = runs.filter((r) => r.server === 'this tree');
const [none, meta] = [mine.find((r) => !r.metadata)!, mine.find((r) => r.metadata)!];
console.log(
  `\ngoals (this tree): RSS growth ${fmt(meta.rssGrowth / stored(meta), 2)}x stored (<= 1.5); fill ${fmt(meta.fillMs / none.fillMs, 2)}x without metadata (<= 2);` +
    ` neighbour p99 ${fmt(meta.fill.p99, 1)} ms during the fill (<= 50), ${fmt(meta.searches!.p99, 1)} ms during filtered searches (<= 20)`,
);
console.log(`results: ${writeResults('rag', { vectors: N, dim: DIM, metadataJsonBytes, runs, tables: { fill: rows, searches: searchRows } })}`);
