// npm run bench:fairness: one heavy caller against a small one, on servers
// with KERNEL_THREADS=1 and KERNEL_THREADS=2 run side by side (child
// processes built from dist/, as `npm start` runs; rounds alternate between
// them). Session A: 50k x 1024 (cosine); session B: 1k x 384.
// - B's single-search latency idle, while A runs two loops of search-many
//   64 x 1024, and while A ingests JSON add-many of 1000 x 1024 in a loop;
//   the server's event-loop delay (monitorEventLoopDelay) through each.
// - 8 concurrent single searches on A: searches/s and the cores the server
//   uses (its CPU seconds over wall seconds, every thread counted).
// - Small work: single searches on B, 16 in flight: requests/s.
// - Round-robin: session C (20k x 384, large enough for the pool) searches
//   one at a time, idle and while A keeps 8 search-many in flight.
// Goals (issue 17) are printed beside the figures, with yes/no.
import { performance } from 'node:perf_hooks';
import { encodeFloat32Base64 } from '../src/schemas/base64-float32.js';
import { startChildServer, serverCpuMs, type ChildServer } from './lib/child-server.js';
import { rowOf, uniformVectors } from './lib/data.js';
import { fmt, median, printTable, quick } from './lib/measure.js';
import { writeResults } from './lib/results.js';

const A_ROWS = quick ? 10_000 : 50_000,
  A_DIM = 1024;
const B_ROWS = 1_000,
  B_DIM = 384;
const C_ROWS = 20_000;
const PHASE_MS = quick ? 1500 : 4000;
const ROUNDS = quick ? 1 : 3;
const THREADS = [1, 2];

interface Setup {
  server: ChildServer;
  a: string;
  b: string;
  c: string;
  ingest: string;
}

const json = (body: unknown) => Buffer.from(JSON.stringify(body));
const numbers = (v: Float32Array) => Array.from(v, (x) => Math.round(x * 1e6) / 1e6);

async function fill(server: ChildServer, token: string, data: Float32Array, dim: number) {
  const n = data.length / dim;
  for (let at = 0; at < n; at += 1000) {
    const vectors = Array.from({ length: Math.min(1000, n - at) }, (_, i) => ({ id: `v${at + i}`, vector: encodeFloat32Base64(rowOf(data, dim, at + i)) }));
    await server.post('/vectors/add-many', JSON.stringify({ vectors }), token);
  }
}

const aData = uniformVectors(A_ROWS, A_DIM, 91);
const bData = uniformVectors(B_ROWS, B_DIM, 92);
const cData = uniformVectors(C_ROWS, B_DIM, 94);
const bQueries = Array.from({ length: 32 }, (_, j) => json({ queryVector: numbers(rowOf(uniformVectors(1, B_DIM, 200 + j), B_DIM, 0)), topK: 10 }));
const aManyBody = json({ queryVectors: Array.from({ length: 64 }, (_, j) => numbers(rowOf(uniformVectors(1, A_DIM, 300 + j), A_DIM, 0))), topK: 10 });
const aOneBodies = Array.from({ length: 16 }, (_, j) => json({ queryVector: numbers(rowOf(uniformVectors(1, A_DIM, 400 + j), A_DIM, 0)), topK: 10 }));
const ingestData = uniformVectors(1000, A_DIM, 93);
const ingestBody = json({ vectors: Array.from({ length: 1000 }, (_, i) => ({ id: `w${i}`, vector: numbers(rowOf(ingestData, A_DIM, i)) })) });

async function setup(threads: number): Promise<Setup> {
  const server = await startChildServer({ KERNEL_THREADS: String(threads), MAX_VECTORS_PER_SESSION: String(A_ROWS) });
  const tokens: string[] = [];
  for (let i = 0; i < 4; i++) tokens.push((await server.post('/token', '')).token as string);
  await fill(server, tokens[0], aData, A_DIM);
  await fill(server, tokens[1], bData, B_DIM);
  await fill(server, tokens[3], cData, B_DIM);
  return { server, a: tokens[0], b: tokens[1], ingest: tokens[2], c: tokens[3] };
}

async function post(server: ChildServer, path: string, body: Buffer, token: string): Promise<number> {
  const t0 = performance.now();
  const res = await server.pool.request({ method: 'POST', path, headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` }, body });
  await res.body.dump();
  if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode}`);
  return performance.now() - t0;
}

const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((x, y) => x - y);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))];
};

/** B's (or `session`'s) single searches one after another for PHASE_MS while `background` loops run; their p50/p99 and the event loop's delay. */
async function latencyUnder(s: Setup, background: (() => Promise<unknown>)[], session = s.b) {
  await s.server.get('/bench/eventloop');
  let running = true;
  const loops = background.map(async (step) => {
    while (running) await step();
  });
  await new Promise((resolve) => setTimeout(resolve, background.length ? 200 : 0));
  const latencies: number[] = [];
  const end = performance.now() + PHASE_MS;
  for (let i = 0; performance.now() < end; i++) latencies.push(await post(s.server, '/search', bQueries[i % bQueries.length], session));
  running = false;
  await Promise.all(loops);
  const loop = (await s.server.get('/bench/eventloop')) as { p99: number; max: number };
  return { p50: percentile(latencies, 0.5), p99: percentile(latencies, 0.99), loopP99: loop.p99, loopMax: loop.max, count: latencies.length };
}

/** `inFlight` loops of POSTs for PHASE_MS: requests/s and the server's cores in use. */
async function throughput(s: Setup, path: string, bodies: Buffer[], token: string, inFlight: number) {
  const cpu0 = await serverCpuMs(s.server);
  const t0 = performance.now();
  const end = t0 + PHASE_MS;
  let done = 0;
  await Promise.all(
    Array.from({ length: inFlight }, async (_, w) => {
      for (let i = w; performance.now() < end; i += inFlight) {
        await post(s.server, path, bodies[i % bodies.length], token);
        done++;
      }
    }),
  );
  const wall = performance.now() - t0;
  return { perSec: done / (wall / 1000), cores: ((await serverCpuMs(s.server)) - cpu0) / wall };
}

const setups = new Map<number, Setup>();
for (const threads of THREADS) setups.set(threads, await setup(threads));
console.error(`sessions filled: A ${A_ROWS} x ${A_DIM}, B ${B_ROWS} x ${B_DIM}`);

type Figures = Record<string, number[]>;
const figures = new Map<number, Figures>(THREADS.map((t) => [t, {}]));
const add = (threads: number, name: string, value: number) => {
  const row = figures.get(threads)!;
  row[name] = [...(row[name] ?? []), value];
};

for (let round = 0; round < ROUNDS; round++) {
  for (const threads of round % 2 ? [...THREADS].reverse() : THREADS) {
    const s = setups.get(threads)!;
    const idle = await latencyUnder(s, []);
    add(threads, 'idle p50', idle.p50);
    add(threads, 'idle p99', idle.p99);
    add(threads, 'idle loop p99', idle.loopP99);
    const heavy = await latencyUnder(
      s,
      [0, 1].map(() => () => post(s.server, '/search-many', aManyBody, s.a)),
    );
    add(threads, 'search-many p50', heavy.p50);
    add(threads, 'search-many p99', heavy.p99);
    add(threads, 'search-many loop p99', heavy.loopP99);
    add(threads, 'search-many loop max', heavy.loopMax);
    const ingest = await latencyUnder(s, [() => post(s.server, '/vectors/add-many', ingestBody, s.ingest)]);
    add(threads, 'ingest p99', ingest.p99);
    add(threads, 'ingest loop p99', ingest.loopP99);
    add(threads, 'ingest loop max', ingest.loopMax);
    const big = await throughput(s, '/search', aOneBodies, s.a, 8);
    add(threads, 'A searches/s', big.perSec);
    add(threads, 'A cores', big.cores);
    const small = await throughput(s, '/search', bQueries, s.b, 16);
    add(threads, 'B req/s', small.perSec);
    const cIdle = await latencyUnder(s, [], s.c);
    // As many as one token may send at once (MAX_BODIES_IN_FLIGHT_PER_TOKEN, 8).
    const cLoaded = await latencyUnder(
      s,
      Array.from({ length: 8 }, () => () => post(s.server, '/search-many', aManyBody, s.a)),
      s.c,
    );
    add(threads, 'C idle p50', cIdle.p50);
    add(threads, 'C idle p99', cIdle.p99);
    add(threads, 'C p50, 8 search-many of A in flight', cLoaded.p50);
    add(threads, 'C p99, 8 search-many of A in flight', cLoaded.p99);
    console.error(
      `round ${round + 1}, ${threads} thread(s): B p99 idle ${fmt(idle.p99)} / under search-many ${fmt(heavy.p99)} ms, A ${fmt(big.perSec, 1)} searches/s on ${fmt(big.cores, 2)} cores`,
    );
  }
}
for (const s of setups.values()) await s.server.stop();

const m = (threads: number, name: string) => median(figures.get(threads)![name]);
const rows: Record<string, string | number>[] = [];
for (const name of Object.keys(figures.get(1)!)) {
  rows.push({ figure: name, 'KERNEL_THREADS=1': fmt(m(1, name), 2), 'KERNEL_THREADS=2': fmt(m(2, name), 2), ratio: fmt(m(2, name) / m(1, name)) });
}
printTable(rows);

const idleP99 = Math.max(2, m(2, 'idle p99'));
const goals = [
  { goal: 'B p99 under search-many <= 4x idle p99 (idle >= 2 ms)', value: m(2, 'search-many p99') / idleP99, limit: 4 },
  { goal: 'B p99 under search-many <= 10 ms', value: m(2, 'search-many p99'), limit: 10 },
  { goal: 'B p50 under search-many <= 2x idle p50', value: m(2, 'search-many p50') / m(2, 'idle p50'), limit: 2 },
  { goal: 'event-loop delay p99 under search-many <= 20 ms', value: m(2, 'search-many loop p99'), limit: 20 },
  { goal: 'event-loop delay p99 under JSON add-many 1000 x 1024 <= 20 ms', value: m(2, 'ingest loop p99'), limit: 20 },
  { goal: '8 searches in flight on A: cores used >= 1.7', value: m(2, 'A cores'), limit: 1.7, atLeast: true },
  { goal: '8 searches in flight on A: searches/s >= 1.6x KERNEL_THREADS=1', value: m(2, 'A searches/s') / m(1, 'A searches/s'), limit: 1.6, atLeast: true },
  { goal: 'small work (B, 16 in flight): req/s >= 0.95x KERNEL_THREADS=1', value: m(2, 'B req/s') / m(1, 'B req/s'), limit: 0.95, atLeast: true },
];
printTable(
  goals.map(({ goal, value, limit, atLeast }) => ({ goal, measured: fmt(value, 2), met: (atLeast ? value >= limit : value <= limit) ? 'yes' : 'no' })),
);
console.log(`results: ${writeResults('fairness', { rows, goals, aRows: A_ROWS, phaseMs: PHASE_MS, rounds: ROUNDS })}`);
