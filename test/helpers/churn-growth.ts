// Child process of test/sessions/churn-memory.test.ts (run with --expose-gc):
// churns sessions of an in-process server over HTTP (replace, delete,
// metadata set and patch, clear, reset, with texts and metadata), then prints
// one JSON line: what the memory budget counts as stored (JS heap estimate,
// metadata and text stores, linear memory) beside the measured growth of the
// JS heap and the ArrayBuffers. As in heap-growth.ts, a first churn,
// unmeasured, compiles the code; then three churns of new sessions are
// measured and the median growth is the data's (V8 now and then keeps a few
// hundred KB of optimized code or feedback after one, or frees as much, that
// the next does not repeat; the parent runs this without bytecode flushing,
// which once freed 1.5 MB of the warm-up's code in a measured churn).
// Then it adds many small sessions and prints what each costs, measured and
// counted (a session's own objects, beside what it stores).
// CHURN_ROUNDS (default 4) sets how many times each session is churned.
import { TestServer } from './http.js';
import { randomVector, seededRng, type Rng } from './random.js';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');

const VECTORS = 1000;
const DIM = 16;
const ROUNDS = Number(process.env.CHURN_ROUNDS ?? 4);
/** Long ids, as the replace attack sends them: each request's copy of an id that is kept is not counted. */
const idOf = (i: number) => `${'i'.repeat(240)}-${String(i).padStart(6, '0')}`;

const server = new TestServer({ requestRatePerSec: 0, tokenRatePerMin: 0, maxSessionsPerAddress: 0, maxSessions: 1000 });
await server.start();

async function send(token: string, path: string, body?: unknown): Promise<void> {
  const res = await server.request('POST', path, { token, body });
  if (res.status !== 200) throw new Error(`${path}: ${res.status} ${res.text}`);
}

const word = (rng: Rng) => ['alpha', 'beta', 'gamma', 'delta', 'кошка', 'собака', '猫', 'chat'][Math.floor(rng() * 8)];
const textOf = (rng: Rng, round: number) => Array.from({ length: 60 + Math.floor(rng() * 60) }, () => word(rng)).join(' ') + ` r${round}`;
const metadataOf = (rng: Rng, i: number, round: number) => ({
  doc: `doc-${i % 17}`,
  round,
  tags: [word(rng), word(rng), `t${Math.floor(rng() * 1000)}`],
  body: 'lorem ipsum '.repeat(20 + Math.floor(rng() * 40)),
  nested: { a: rng(), b: [i, round, { c: `x${i}` }] },
});

function records(rng: Rng, from: number, to: number, round: number) {
  return Array.from({ length: to - from }, (_, k) => {
    const i = from + k;
    return { id: idOf(i), vector: randomVector(rng, DIM), metadata: metadataOf(rng, i, round), text: textOf(rng, round) };
  });
}

async function fill(rng: Rng, token: string, round: number, from = 0, to = VECTORS): Promise<void> {
  for (let at = from; at < to; at += 100) await send(token, '/vectors/add-many', { vectors: records(rng, at, Math.min(at + 100, to), round) });
}

/** One round of every kind of write, ending with the session full again. */
async function churn(rng: Rng, token: string, round: number): Promise<void> {
  await fill(rng, token, round); // replace every vector
  await send(token, '/vectors/delete-many', { ids: Array.from({ length: 100 }, (_, k) => idOf(k * 3)) });
  for (let k = 0; k < 20; k++) {
    const i = 1 + k * 6; // neither i nor i + 1 a multiple of 3 (deleted above)
    await send(token, '/vectors/metadata/set', { id: idOf(i), metadata: metadataOf(rng, i, round + 1000) });
    await send(token, '/vectors/metadata/patch', { id: idOf(i + 1), patch: { round: null, extra: { k, s: 'y'.repeat(200) }, tags: [word(rng)] } });
  }
  if (round === 1) await send(token, '/vectors/clear');
  if (round === 2) await send(token, '/index/reset');
  // Replaced again and again, as in the attack: nothing deleted in between.
  for (let again = 0; again < 3; again++) await fill(rng, token, round);
}

async function churnAll(tokens: string[], rng: Rng): Promise<void> {
  for (let round = 0; round < ROUNDS; round++) for (const token of tokens) await churn(rng, token, round);
}

function settle() {
  gc!();
  gc!();
  const { heapUsed, arrayBuffers } = process.memoryUsage();
  const { heapBytes, metadataBytes, linearMemoryBytes } = server.store.memoryUsage();
  return {
    measured: heapUsed + arrayBuffers,
    heapUsed,
    arrayBuffers,
    counted: heapBytes + metadataBytes + linearMemoryBytes,
    heapBytes,
    metadataBytes,
    linearMemoryBytes,
  };
}

/** Churn two new sessions; how much was measured and counted, in all and by part. */
async function measuredChurn(seed: number) {
  const before = settle();
  const tokens = [await server.token(), await server.token()];
  await churnAll(tokens, seededRng(seed));
  const after = settle();
  const growth = Object.fromEntries(Object.entries(after).map(([key, value]) => [key, value - before[key as keyof typeof before]]));
  return growth as typeof after;
}

// Unmeasured: compiles the code and fills the server's caches, then lets its session go.
const warm = await server.token();
await churnAll([warm], seededRng(1));
await send(warm, '/index/reset');

/** Many new sessions of one vector (with metadata and text): what each costs beside what it stores. */
async function measuredSessions(count: number) {
  const before = settle();
  for (let i = 0; i < count; i++) {
    const token = await server.token();
    await send(token, '/vectors/add', { id: 'a', vector: [1, 2, 3, 4], metadata: { k: i }, text: `hello world ${i}` });
  }
  const after = settle();
  return {
    measured: (after.measured - before.measured) / count,
    counted: (after.heapBytes + after.metadataBytes - before.heapBytes - before.metadataBytes) / count,
  };
}

const churns = [await measuredChurn(2), await measuredChurn(3), await measuredChurn(4)];
const median = [...churns].sort((a, b) => a.measured - b.measured)[1];
const sessionsA = await measuredSessions(200);
const sessionsB = await measuredSessions(200);
const sessions = sessionsA.measured <= sessionsB.measured ? sessionsA : sessionsB;
console.log(JSON.stringify({ churns, data: median, sessions }));
server.store.stopSweeper();
await server.close();
