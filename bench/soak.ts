// Soak test: many concurrent sessions doing a mixed workload against a real
// server process on loopback, every answer checked against that session's
// own model. Bounded in time; prints p50/p99 latency and the server's peak RSS.
//
//   npm run soak                                # 200 sessions, 60 s
//   SOAK_SESSIONS=50 SOAK_SECONDS=10 npm run soak
//   SOAK_DATA_DIR=1 npm run soak                # the same with DATA_DIR persistence
//
// The server runs with TOKEN_RATE_PER_MIN=0 and REQUEST_RATE_PER_SEC=0 (rate
// limits off: one address drives every session) and a short SESSION_TTL_MS,
// so some sessions go idle past it and must then get SESSION_EXPIRED (and
// nothing else) before they take a new token.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { NO_RATE_LIMITS, spawnServer } from './lib/spawn-server.js';

const SESSIONS = Number(process.env.SOAK_SESSIONS ?? 200);
const SECONDS = Number(process.env.SOAK_SECONDS ?? 60);
const TTL_MS = Number(process.env.SOAK_TTL_MS ?? 4000);
const DIM = 16;
const ID_POOL = 300;

// ---- the model: small integer vectors under l2, so every score is exact ----

interface Row {
  vector: number[];
  metadata: { g: number; n: number };
  seq: number;
}

class Model {
  rows = new Map<string, Row>();
  seq = 0;
}

function reference(model: Model, query: number[], topK: number, filter?: { g: number }) {
  const scored = [...model.rows]
    .filter(([, row]) => !filter || row.metadata.g === filter.g)
    .map(([id, row]) => ({ id, seq: row.seq, d: row.vector.reduce((s, x, i) => s + (x - query[i]) ** 2, 0) }));
  scored.sort((a, b) => a.d - b.d || a.seq - b.seq);
  return scored.slice(0, topK).map(({ id, d }) => ({ id, score: Math.sqrt(d) }));
}

// ---- measurements ----

const latencies: number[] = [];
const counts = { requests: 0, wrong: 0, serverErrors: 0, expired: 0, byRoute: {} as Record<string, number> };
const failures: string[] = [];

function wrong(what: string) {
  counts.wrong++;
  if (failures.length < 20) failures.push(what);
}

let base = '';

async function call(path: string, token: string | null, body?: unknown): Promise<{ status: number; json: any }> {
  const t0 = performance.now();
  const res = await fetch(base + path, {
    method: path === '/session' ? 'GET' : 'POST',
    headers: { ...(token ? { authorization: `Bearer ${token}` } : {}), ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  const json = await res.json();
  latencies.push(performance.now() - t0);
  counts.requests++;
  counts.byRoute[path] = (counts.byRoute[path] ?? 0) + 1;
  if (res.status >= 500) {
    counts.serverErrors++;
    wrong(`${path}: ${res.status} ${JSON.stringify(json).slice(0, 200)}`);
  }
  return { status: res.status, json };
}

// ---- one session's loop ----

const rand = (n: number) => Math.floor(Math.random() * n);
const vector = () => Array.from({ length: DIM }, () => rand(7) - 3);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

class SessionExpired extends Error {}

async function runSession(deadline: number): Promise<void> {
  while (Date.now() < deadline) {
    const token = (await call('/token', null)).json.token as string;
    const model = new Model();
    try {
      while (Date.now() < deadline) {
        // Now and then a session goes idle past the TTL: its next answer must be SESSION_EXPIRED.
        if (Math.random() < 0.002) {
          await sleep(TTL_MS + 500);
          const res = await call('/vectors/has', token, { id: 'x' });
          if (res.status !== 401 || res.json.error?.code !== 'SESSION_EXPIRED')
            wrong(`idle past the TTL: ${res.status} ${JSON.stringify(res.json).slice(0, 200)}`);
          else counts.expired++;
          break;
        }
        await step(token, model);
      }
    } catch (err) {
      if (!(err instanceof SessionExpired)) throw err;
    }
  }
}

/** A non-2xx answer that is not expected is wrong; an expiry ends the session (it should not happen while active). */
function check(path: string, res: { status: number; json: any }, expectStatus = 200): boolean {
  if (res.status === 401 && res.json.error?.code === 'SESSION_EXPIRED') {
    wrong(`${path}: SESSION_EXPIRED while the session was in use`);
    throw new SessionExpired();
  }
  if (res.status !== expectStatus) {
    wrong(`${path}: ${res.status}, expected ${expectStatus}: ${JSON.stringify(res.json).slice(0, 200)}`);
    return false;
  }
  return true;
}

function same(path: string, actual: unknown, expected: unknown) {
  if (JSON.stringify(actual) !== JSON.stringify(expected))
    wrong(`${path}: got ${JSON.stringify(actual).slice(0, 200)}, expected ${JSON.stringify(expected).slice(0, 200)}`);
}

async function step(token: string, model: Model): Promise<void> {
  const op = Math.random();
  if (op < 0.3 || model.rows.size === 0) {
    const vectors = Array.from({ length: 5 + rand(45) }, () => ({ id: `v${rand(ID_POOL)}`, vector: vector(), metadata: { g: rand(3), n: rand(100) } }));
    const res = await call('/vectors/add-many', token, { vectors, metric: 'l2' });
    if (!check('/vectors/add-many', res)) return;
    let added = 0;
    for (const v of vectors) {
      if (!model.rows.has(v.id)) added++;
      model.rows.set(v.id, { vector: v.vector, metadata: v.metadata, seq: model.seq++ });
    }
    same('/vectors/add-many mutation', res.json.mutation, { added, replaced: vectors.length - added });
  } else if (op < 0.55) {
    const queryVector = vector();
    const topK = 1 + rand(10);
    const filter = Math.random() < 0.3 ? { g: rand(3) } : undefined;
    const res = await call('/search', token, { queryVector, topK, filter });
    if (check('/search', res)) same('/search results', res.json.results, reference(model, queryVector, topK, filter));
  } else if (op < 0.7) {
    const queryVectors = Array.from({ length: 2 + rand(3) }, vector);
    const topK = 1 + rand(10);
    const res = await call('/search-many', token, { queryVectors, topK });
    if (check('/search-many', res))
      same(
        '/search-many results',
        res.json.results,
        queryVectors.map((q) => reference(model, q, topK)),
      );
  } else if (op < 0.8) {
    const id = `v${rand(ID_POOL)}`;
    const metadata = { g: rand(3), n: rand(100) };
    const row = model.rows.get(id);
    const res = await call('/vectors/metadata/set', token, { id, metadata });
    if (check('/vectors/metadata/set', res, row ? 200 : 404) && row) row.metadata = metadata;
  } else if (op < 0.9) {
    const ids = Array.from({ length: 1 + rand(10) }, () => `v${rand(ID_POOL)}`);
    const expected = new Set(ids.filter((id) => model.rows.has(id))).size;
    const res = await call('/vectors/delete-many', token, { ids });
    if (check('/vectors/delete-many', res)) same('/vectors/delete-many deleted', res.json.mutation.deleted, expected);
    for (const id of ids) model.rows.delete(id);
  } else {
    const ids = Array.from({ length: 1 + rand(5) }, () => `v${rand(ID_POOL)}`);
    const res = await call('/vectors/get-many', token, { ids });
    if (!check('/vectors/get-many', res)) return;
    const unique = [...new Set(ids)];
    same(
      '/vectors/get-many vectors',
      res.json.vectors,
      unique.filter((id) => model.rows.has(id)).map((id) => ({ id, vector: model.rows.get(id)!.vector, metadata: model.rows.get(id)!.metadata })),
    );
    const session = await call('/session', token);
    if (check('/session', session)) same('/session vectorCount', session.json.session.vectorCount, model.rows.size);
  }
}

// ---- the server process ----

function peakRssBytes(pid: number): number {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  return Number(/VmHWM:\s+(\d+) kB/.exec(status)![1]) * 1024;
}

async function main() {
  const dataDir = process.env.SOAK_DATA_DIR ? mkdtempSync(join(tmpdir(), 'tempvec-soak-')) : '';
  const server = spawnServer({ entry: 'source', env: { ...NO_RATE_LIMITS, SESSION_TTL_MS: String(TTL_MS), DATA_DIR: dataDir }, stderr: 'inherit' });
  const { child } = server;
  base = await server.listening();
  console.log(
    `soak: ${SESSIONS} sessions for ${SECONDS} s against ${base} (pid ${child.pid}), TTL ${TTL_MS} ms, rate limits off${dataDir ? `, DATA_DIR ${dataDir}` : ''}`,
  );

  const started = Date.now();
  const deadline = started + SECONDS * 1000;
  await Promise.all(Array.from({ length: SESSIONS }, () => runSession(deadline)));
  const elapsed = (Date.now() - started) / 1000;
  const peak = peakRssBytes(child.pid!);
  child.kill('SIGTERM');
  await server.exited;
  if (dataDir) rmSync(dataDir, { recursive: true, force: true });

  latencies.sort((a, b) => a - b);
  const pct = (p: number) => latencies[Math.min(latencies.length - 1, Math.floor(latencies.length * p))].toFixed(2);
  console.log(`requests        ${counts.requests} in ${elapsed.toFixed(1)} s (${(counts.requests / elapsed).toFixed(0)}/s)`);
  console.log(`by route        ${JSON.stringify(counts.byRoute)}`);
  console.log(`latency ms      p50 ${pct(0.5)}  p99 ${pct(0.99)}  max ${pct(1)}`);
  console.log(`server peak RSS ${(peak / 1024 / 1024).toFixed(1)} MiB`);
  console.log(`expired         ${counts.expired} sessions idled past the TTL and got SESSION_EXPIRED`);
  console.log(`wrong answers   ${counts.wrong}   5xx ${counts.serverErrors}`);
  for (const failure of failures) console.log(`  ${failure}`);
  process.exitCode = counts.wrong === 0 && counts.serverErrors === 0 ? 0 : 1;
}

await main();
