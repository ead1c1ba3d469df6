// node --import tsx bench/ttl.bench.ts: issue 36's TTL goal. One session adds
// TTL_RECORDS records (default 50,000 of 64 dimensions with metadata; 5,000
// with --quick) whose ttlMs all end at the same instant, while a neighbour
// session searches every 10 ms (bench/lib/neighbour.ts). Printed: the
// neighbour's p50/p99/max before the expiry (a quiet window of the same
// length) and from 1 s before it until the sweep has freed the rows (the
// session's stats.vectorBytes back to 0), the expiring session's count at
// the instant (0: gone from reads at once), and how long the sweep took.
// Goal: the neighbour's p99 under 50 ms through the expiry. Loopback only;
// bounded by TTL_RECORDS and the expiry's window (TTL_WINDOW_SECONDS, default 20).
import { startChildServer, type ChildServer } from './lib/child-server.js';
import { rowOf, uniformVectors } from './lib/data.js';
import { fmt, printTable, quick } from './lib/measure.js';
import { neighbourWatch, type Watched } from './lib/neighbour.js';
import { writeResults } from './lib/results.js';

const RECORDS = Number(process.env.TTL_RECORDS ?? (quick ? 5_000 : 50_000));
const WINDOW_MS = Number(process.env.TTL_WINDOW_SECONDS ?? 20) * 1000;
const DIM = 64;
const BATCH = 1000;
const GOAL_MS = 50;
const NEIGHBOUR_DIM = 16;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sleepUntil = (at: number) => sleep(Math.max(0, at - Date.now()));

/** The neighbour's session: 2,000 vectors to search, every 10 ms. */
async function neighbourSession(server: ChildServer): Promise<{ token: string; search: Buffer }> {
  const token = (await server.post('/token', '')).token;
  const data = uniformVectors(2000, NEIGHBOUR_DIM, 9);
  const vectors = Array.from({ length: 2000 }, (_, i) => ({ id: `n${i}`, vector: Array.from(rowOf(data, NEIGHBOUR_DIM, i)) }));
  for (let i = 0; i < vectors.length; i += BATCH) await server.post('/vectors/add-many', JSON.stringify({ vectors: vectors.slice(i, i + BATCH) }), token);
  return { token, search: Buffer.from(JSON.stringify({ queryVector: Array.from(rowOf(data, NEIGHBOUR_DIM, 0)), topK: 10 })) };
}

/** RECORDS records that all expire at `expiresAt` (each batch's ttlMs is what is left until then). */
async function addExpiring(server: ChildServer, token: string, expiresAt: number): Promise<void> {
  const data = uniformVectors(RECORDS, DIM, 3);
  for (let from = 0; from < RECORDS; from += BATCH) {
    const vectors = [];
    const ttlMs = expiresAt - Date.now();
    if (ttlMs < 1000) throw new Error(`the records took too long to add: raise TTL_WINDOW_SECONDS (${WINDOW_MS / 1000})`);
    for (let i = from; i < Math.min(RECORDS, from + BATCH); i++) {
      vectors.push({ id: `e${i}`, vector: Array.from(rowOf(data, DIM, i)), metadata: { i, group: i % 10, tag: `t${i % 500}` }, ttlMs });
    }
    await server.post('/vectors/add-many', JSON.stringify({ vectors }), token);
  }
}

async function main(): Promise<void> {
  const server = await startChildServer({ MEMORY_BUDGET_BYTES: String(2 * 1024 ** 3) });
  try {
    const neighbour = await neighbourSession(server);
    const expiring = (await server.post('/token', '')).token;
    const expiresAt = Date.now() + WINDOW_MS;
    const addStart = performance.now();
    await addExpiring(server, expiring, expiresAt);
    const addMs = performance.now() - addStart;
    const before = (await server.get('/session', expiring)).stats.vectorBytes;
    // Each batch's ttlMs ran from its arrival: the records expire over a few ms from the first batch's instant to the last's.
    const expiries: number[] = [];
    for (let from = 0; from < RECORDS; from += BATCH) {
      const got = await server.post('/vectors/get', JSON.stringify({ id: `e${from}` }), expiring);
      expiries.push(Date.parse(got.vector.expiresAt));
    }
    const first = Math.min(...expiries);
    const last = Math.max(...expiries);

    // A quiet window first (the same neighbour, nothing expiring; as long as the expiry's is about), then the expiry's.
    await server.get('/bench/eventloop'); // resets the server's event-loop delay histogram
    const quietStop = neighbourWatch(server, neighbour.token, neighbour.search, 10);
    await sleep(Math.min(3000, Math.max(0, first - 1500 - Date.now())));
    const quiet = await quietStop(5000);
    const quietLoop = await server.get('/bench/eventloop');
    await sleepUntil(expiresAt - 1000);
    await server.get('/bench/eventloop');
    const stop = neighbourWatch(server, neighbour.token, neighbour.search, 10);
    await sleepUntil(first - 30);
    const countBefore = (await server.post('/vectors/count', '{}', expiring)).count;
    await sleepUntil(last + 1);
    const countAfter = (await server.post('/vectors/count', '{}', expiring)).count;
    let freedAt = Number.NaN;
    for (let polls = 0; polls < 600; polls++) {
      const bytes = (await server.get('/session', expiring)).stats.vectorBytes;
      if (bytes === 0) {
        freedAt = Date.now();
        break;
      }
      await sleep(50);
    }
    await sleep(500);
    const during = await stop(5000);
    const duringLoop = await server.get('/bench/eventloop');
    const row = (name: string, w: Watched, loop: { max: number }) => ({
      window: name,
      searches: w.count,
      'p50 ms': fmt(w.p50, 2),
      'p99 ms': fmt(w.p99, 2),
      'max ms': fmt(w.max, 2),
      errors: w.errors,
      'server loop max ms': fmt(loop.max, 1),
    });
    const rows = [row('quiet', quiet, quietLoop), row('expiry of all', during, duringLoop)];
    printTable(rows);
    const sweepMs = freedAt - last;
    console.log(
      `${RECORDS} records x ${DIM} dims (${fmt(before / 2 ** 20, 1)} MiB of vectors) added in ${fmt(addMs / 1000, 1)} s, expiring over ${last - first} ms; count 30 ms before: ${countBefore}, 1 ms after: ${countAfter} (goal 0); freed by the sweep ${fmt(sweepMs, 0)} ms after (sweep every 1 s)`,
    );
    const met = during.p99 < GOAL_MS && countBefore === RECORDS && countAfter === 0 && during.errors === 0;
    console.log(
      `goal: neighbour p99 under ${GOAL_MS} ms through the expiry: ${met ? 'met' : 'NOT met'} (p99 ${fmt(during.p99, 2)} ms; quiet ${fmt(quiet.p99, 2)} ms)`,
    );
    const file = writeResults('ttl', {
      records: RECORDS,
      dimensions: DIM,
      addMs: Math.round(addMs),
      expiryWindowMs: last - first,
      countBeforeExpiry: countBefore,
      countAtExpiry: countAfter,
      sweepMs: Math.round(sweepMs),
      neighbour: { quiet, expiry: during },
      goal: { neighbourP99Ms: GOAL_MS, met },
      tables: {
        ttl: rows,
        expiry: [
          {
            records: RECORDS,
            'expiring over ms': last - first,
            'count 30 ms before': countBefore,
            'count 1 ms after': countAfter,
            'freed ms after': Math.round(sweepMs),
            'goal p99 ms': GOAL_MS,
            met: String(met),
          },
        ],
      },
    });
    console.log(`results: ${file}`);
  } finally {
    await server.stop();
  }
}

await main();
