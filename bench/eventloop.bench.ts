// npm run bench:eventloop [-- --quick]: how long large requests hold the
// server's main thread (issue 17 part 5, issue 16's event-loop goals). One
// child server (the compiled dist/, as `npm start` runs it, DATA_DIR on) gets
// one load at a time, each for a bounded time: JSON and base64 add-many of
// 1000 x 1024, JSON and base64 search-many of 64 x 1024 (on a 1000 x 1024
// session, so the body and not the scan is what costs), a large answer
// (search-many, topK 100, 2 KiB metadata), NDJSON import of 50k x 384,
// compaction of a 50k x 1024 session's log, and its reopen after a restart.
// For each: the event-loop delay p99 and max while the load ran (the
// server's /metrics gauges, read at the start and the end of the load; the
// max is about the longest time the main thread was held), and the p50/p99
// of a small session's single search (1000 x 384, topK 10), one at a time
// every 2 ms beside the load. Goals: max about 20 ms (50 ms for compaction
// and reopen), the small session's p99 under 50 ms.
import { mkdtempSync, rmSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { encodeFloat32Base64 } from '../src/schemas/base64-float32.js';
import { startChildServer, type ChildServer } from './lib/child-server.js';
import { rowOf, uniformVectors } from './lib/data.js';
import { printTable, quick } from './lib/measure.js';
import { writeResults } from './lib/results.js';

const LOAD_SECONDS = Number(process.env.EVENTLOOP_SECONDS ?? (quick ? 2 : 6));
const BIG_ROWS = quick ? 10_000 : 50_000;
const IMPORT_ROWS = quick ? 10_000 : 50_000;
const BATCH = 1000;
/** EVENTLOOP_MEMORY_ONLY=1: no DATA_DIR (no log writes; compaction and reopen are skipped). */
const MEMORY_ONLY = process.env.EVENTLOOP_MEMORY_ONLY === '1';
/** EVENTLOOP_ONLY=word,word: only the loads whose name contains one of the words (the reopen always runs). */
const ONLY = process.env.EVENTLOOP_ONLY?.split(',');

const json = (x: unknown) => Buffer.from(JSON.stringify(x));
const sorted = (xs: number[]) => [...xs].sort((a, b) => a - b);
const pct = (xs: number[], p: number) => (xs.length === 0 ? NaN : sorted(xs)[Math.min(xs.length - 1, Math.floor(p * xs.length))]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function request(child: ChildServer, path: string, token: string, body?: Buffer, type = 'application/json'): Promise<void> {
  const headers = { authorization: `Bearer ${token}`, ...(body ? { 'content-type': type } : {}) };
  const res = await child.pool.request({ method: body ? 'POST' : 'GET', path, headers, body });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode} ${text.slice(0, 300)}`);
}

/** Event-loop delay p99 and max over the last METRICS_WINDOW_MS (one load's time: the env below), ms. */
async function eventLoopDelay(child: ChildServer): Promise<{ p99: number; max: number }> {
  const res = await child.pool.request({ method: 'GET', path: '/metrics' });
  const text = await res.body.text();
  const read = (name: string) => Number(new RegExp(`^${name} (\\S+)$`, 'm').exec(text)?.[1] ?? NaN) * 1000;
  return { p99: read('tempvec_event_loop_delay_p99_seconds'), max: read('tempvec_event_loop_delay_max_seconds') };
}

/** Add-many bodies of `rows` x `dim` in batches of 1000 (ids doc-0...), vectors as base64 or JSON numbers. */
function addManyBodies(rows: number, dim: number, seed: number, base64: boolean, metadata?: (i: number) => object): Buffer[] {
  const data = uniformVectors(rows, dim, seed);
  const bodies: Buffer[] = [];
  for (let i = 0; i < rows; i += BATCH) {
    const vectors = [];
    for (let j = i; j < Math.min(rows, i + BATCH); j++) {
      const v = rowOf(data, dim, j);
      vectors.push({ id: `doc-${j}`, vector: base64 ? encodeFloat32Base64(v) : Array.from(v), ...(metadata ? { metadata: metadata(j) } : {}) });
    }
    bodies.push(json({ vectors }));
  }
  return bodies;
}

function searchManyBody(dim: number, base64: boolean, topK: number, includeMetadata = false): Buffer {
  const data = uniformVectors(64, dim, 99);
  const queryVectors = Array.from({ length: 64 }, (_, i) => (base64 ? encodeFloat32Base64(rowOf(data, dim, i)) : Array.from(rowOf(data, dim, i))));
  return json({ queryVectors, topK, includeMetadata });
}

/** The NDJSON export of `rows` x `dim` (base64), as GET /vectors/export writes it. */
function importBody(rows: number, dim: number): Buffer {
  const data = uniformVectors(rows, dim, 5);
  const lines = [JSON.stringify({ format: 'tempvec-export', version: 1, dimensions: dim, metric: 'cosine', vectorType: 'float32', count: rows })];
  for (let i = 0; i < rows; i++) lines.push(`{"id":"doc-${i}","vector":"${encodeFloat32Base64(rowOf(data, dim, i))}","metadata":{}}`);
  return Buffer.from(lines.join('\n') + '\n');
}

async function newSession(child: ChildServer, bodies: Buffer[]): Promise<string> {
  const { token } = await child.post('/token', '');
  for (const body of bodies) await request(child, '/vectors/add-many', token, body);
  return token;
}

interface Row {
  load: string;
  requests: number;
  'load ms p50': number;
  'event-loop delay p99 ms': number;
  'event-loop delay max ms': number;
  'small search p50 ms': number;
  'small search p99 ms': number;
  'small searches': number;
}

/** Single searches of the small session one at a time, every 2 ms, until stopped. */
function smallSearches(child: ChildServer, token: string, queries: Buffer[]) {
  const latencies: number[] = [];
  let running = true;
  const loop = (async () => {
    for (let i = 0; running; i++) {
      const t0 = performance.now();
      await request(child, '/search', token, queries[i % queries.length]);
      latencies.push(performance.now() - t0);
      await sleep(2);
    }
  })();
  return async () => {
    running = false;
    await loop;
    return latencies;
  };
}

/**
 * Run `once` back to back (`inFlight` at a time) for LOAD_SECONDS (and at
 * most `maxCount` times), the small session's searches beside it.
 */
async function phase(
  child: ChildServer,
  small: { token: string; queries: Buffer[] },
  load: string,
  once: () => Promise<unknown>,
  { inFlight = 1, maxCount = 1000 } = {},
): Promise<Row | undefined> {
  if (ONLY && load !== 'idle' && !ONLY.some((word) => load.includes(word))) return undefined;
  const stopSearches = smallSearches(child, small.token, small.queries);
  await eventLoopDelay(child);
  const times: number[] = [];
  const end = performance.now() + LOAD_SECONDS * 1000;
  let started = 0;
  const worker = async () => {
    while (performance.now() < end && started < maxCount) {
      started++;
      const t0 = performance.now();
      await once();
      times.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: inFlight }, worker));
  const delay = await eventLoopDelay(child);
  const latencies = await stopSearches();
  const row: Row = {
    load,
    requests: times.length,
    'load ms p50': round(pct(times, 0.5)),
    'event-loop delay p99 ms': round(delay.p99),
    'event-loop delay max ms': round(delay.max),
    'small search p50 ms': round(pct(latencies, 0.5)),
    'small search p99 ms': round(pct(latencies, 0.99)),
    'small searches': latencies.length,
  };
  console.log(JSON.stringify(row));
  return row;
}

const round = (x: number) => Math.round(x * 10) / 10;

async function main() {
  const dataDir = mkdtempSync(join(tmpdir(), 'tempvec-eventloop-'));
  // The /metrics gauges cover their window (a scrape resets nothing): one load's time, read at its end.
  const env = { DATA_DIR: MEMORY_ONLY ? '' : dataDir, MEMORY_BUDGET_BYTES: String(8 * 1024 ** 3), METRICS_WINDOW_MS: String(LOAD_SECONDS * 1000) };
  const load0 = loadavg()[0];
  const rows: Row[] = [];
  const push = (row: Row | undefined) => row && rows.push(row);
  let child = await startChildServer(env);
  try {
    console.log(`preparing: small session 1000 x 384, sessions of 1000 x 1024 and ${BIG_ROWS} x 1024 ...`);
    const smallToken = await newSession(child, addManyBodies(1000, 384, 1, true));
    const queryData = uniformVectors(16, 384, 2);
    const small = { token: smallToken, queries: Array.from({ length: 16 }, (_, i) => json({ queryVector: Array.from(rowOf(queryData, 384, i)), topK: 10 })) };
    const addJson = addManyBodies(BATCH, 1024, 3, false);
    const addBase64 = addManyBodies(BATCH, 1024, 3, true);
    const mid = await newSession(child, addBase64);
    const answerToken = await newSession(
      child,
      addManyBodies(1000, 64, 4, true, (i) => ({ text: 'x'.repeat(2048), i })),
    );
    const big = await newSession(child, addManyBodies(BIG_ROWS, 1024, 6, true));
    const imported = (await child.post('/token', '')).token as string;
    const importNdjson = importBody(IMPORT_ROWS, 384);
    const searchJson = searchManyBody(1024, false, 10);
    const searchBase64 = searchManyBody(1024, true, 10);
    const largeAnswer = searchManyBody(64, true, 100, true);

    push(await phase(child, small, 'idle', () => sleep(50)));
    push(
      await phase(
        child,
        small,
        `add-many JSON 1000 x 1024 (${(addJson[0].length / 1e6).toFixed(1)} MB)`,
        () => request(child, '/vectors/add-many', mid, addJson[0]),
        { inFlight: 2 },
      ),
    );
    push(
      await phase(
        child,
        small,
        `add-many base64 1000 x 1024 (${(addBase64[0].length / 1e6).toFixed(1)} MB)`,
        () => request(child, '/vectors/add-many', mid, addBase64[0]),
        { inFlight: 2 },
      ),
    );
    push(
      await phase(
        child,
        small,
        `search-many JSON 64 x 1024 on 1000 (${(searchJson.length / 1e6).toFixed(1)} MB)`,
        () => request(child, '/search-many', mid, searchJson),
        { inFlight: 2 },
      ),
    );
    push(
      await phase(
        child,
        small,
        `search-many base64 64 x 1024 on 1000 (${(searchBase64.length / 1e6).toFixed(2)} MB)`,
        () => request(child, '/search-many', mid, searchBase64),
        { inFlight: 2 },
      ),
    );
    push(
      await phase(
        child,
        small,
        'large answer: search-many 64, topK 100, 2 KiB metadata (~13 MB)',
        () => request(child, '/search-many', answerToken, largeAnswer),
        { inFlight: 2 },
      ),
    );
    push(
      await phase(
        child,
        small,
        `import NDJSON base64 ${IMPORT_ROWS} x 384 (${(importNdjson.length / 1e6).toFixed(0)} MB)`,
        () => request(child, '/vectors/import', imported, importNdjson, 'application/x-ndjson'),
        { maxCount: 3 },
      ),
    );
    if (!MEMORY_ONLY) {
      push(await phase(child, small, `compaction of ${BIG_ROWS} x 1024`, () => request(child, '/bench/compact', big, Buffer.from('{}')), { maxCount: 3 }));

      // Reopen: a new process over the same DATA_DIR; the small session is reopened first, then the big one by its first request.
      await child.stop();
      child = await startChildServer(env);
      await request(child, '/search', small.token, small.queries[0]);
      let reopened = false;
      push(
        await phase(child, small, `reopen of ${BIG_ROWS} x 1024 (after a restart)`, async () => {
          if (reopened) return sleep(50);
          reopened = true;
          await request(child, '/session', big);
        }),
      );
    }
  } finally {
    await child.stop();
    rmSync(dataDir, { recursive: true, force: true });
  }
  const load1 = loadavg()[0];
  console.log(
    `\nevent-loop delay of the server per load (load average ${load0.toFixed(1)} -> ${load1.toFixed(1)}, ${LOAD_SECONDS} s per load${quick ? ', --quick' : ''}${MEMORY_ONLY ? ', no DATA_DIR' : ', DATA_DIR on'})`,
  );
  printTable(rows as unknown as Record<string, string | number>[]);
  console.log(`\nwrote ${writeResults('eventloop', { quick, memoryOnly: MEMORY_ONLY, loadSeconds: LOAD_SECONDS, loadAverage: [load0, load1], rows })}`);
}

await main();
