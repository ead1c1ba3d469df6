// npm run bench:adversary: issue 33's goals. For every route, the worst-shaped
// request we can build within the limits the server publishes (GET /limits,
// read at run time, so new limits change the shapes by themselves), each sent
// again and again for a bounded time against a fresh server started as
// `npm start` starts it (the compiled dist/, its Node flags and heap limit,
// rate limits on), while a neighbour session searches every 10 ms. Printed:
// route x shape x the neighbour's longest wait x the server's longest
// event-loop delay (monitorEventLoopDelay in bench/lib/server-process.mjs) x
// peak RSS and the budget's memoryUsedBytes; goals: both waits at most 50 ms.
// Then churn (replace, delete, metadata set and patch, clear, reset) as fast
// as the rate limits let one client, in memory and then with DATA_DIR: RSS
// growth against the growth of memoryUsedBytes (goal: at most 1.2x counted +
// CHURN_RSS_SLACK); with DATA_DIR also the data directory's size against
// persistence.dataDirMaxBytes when published, and acknowledged writes after a
// SIGKILL and restart (goal: 0 lost).
//
// ADVERSARY_SECONDS bounds each shape (default 10, 2 with --quick; a request still running
// then is abandoned and the server killed after ADVERSARY_GRACE_SECONDS,
// default 30); ADVERSARY_MAX_REQUESTS bounds its count (default 200);
// ADVERSARY_CHURN_SECONDS each churn (default 600, 20 with --quick, 0 skips it),
// ADVERSARY_CHURN_MODES which (default memory,disk: in memory, then with DATA_DIR);
// ADVERSARY_ONLY=name,name runs the shapes (or "churn") whose name or route
// contains one of the words; ADVERSARY_BUDGET_BYTES sets the memory budget
// (default 2 GiB: the machine is shared); ADVERSARY_FALLBACK_NODES is the
// operand count of the filter shapes while the server publishes no
// maxFilterNodes (default 2000, the issue's figure). Loopback only.
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { launcherNodeFlags, startChildServer, type ChildServer } from './lib/child-server.js';
import { type Context, json, Limits, padded, queryVector, type Request, SHAPES, type Shape, targetBatches } from './lib/adversary-shapes.js';
import { rowOf, uniformVectors } from './lib/data.js';
import { Codes, printTable, quick } from './lib/measure.js';
import { writeResults } from './lib/results.js';
import { neighbourWatch } from './lib/neighbour.js';

const MiB = 1024 * 1024;
const SECONDS = Number(process.env.ADVERSARY_SECONDS ?? (quick ? 2 : 10));
const GRACE_MS = Number(process.env.ADVERSARY_GRACE_SECONDS ?? 30) * 1000;
const MAX_REQUESTS = Number(process.env.ADVERSARY_MAX_REQUESTS ?? 200);
const CHURN_SECONDS = Number(process.env.ADVERSARY_CHURN_SECONDS ?? (quick ? 20 : 600));
/** memory: RSS against what the budget counts, as fast as writes go; disk: the same with DATA_DIR, then disk against the quota and a SIGKILL + restart. */
const CHURN_MODES = (process.env.ADVERSARY_CHURN_MODES ?? 'memory,disk').split(',');
const BUDGET = Number(process.env.ADVERSARY_BUDGET_BYTES ?? 2 * 1024 * MiB);
const FALLBACK_NODES = Number(process.env.ADVERSARY_FALLBACK_NODES ?? 2000); // for the header line: bench/lib/adversary-shapes.ts reads it
const ONLY = process.env.ADVERSARY_ONLY?.split(',');
const GOAL_MS = 50;
/** RSS the churn may add beyond 1.2x what the budget counts: allocator and heap slack, JIT code, log buffers. */
const CHURN_RSS_SLACK = 64 * MiB;
const NEIGHBOUR_DIM = 16;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const selected = (...names: string[]) => !ONLY || ONLY.some((w) => names.some((n) => n.includes(w)));

/** A fresh server as `npm start` runs it: its Node flags, the heap limit its launcher sets from the budget, rate limits on. */
async function startServer(env: Record<string, string> = {}): Promise<ChildServer> {
  const full = { MEMORY_BUDGET_BYTES: String(BUDGET), BENCH_RATE_LIMITS: 'on', ...env };
  return startChildServer(full, launcherNodeFlags(full));
}

async function kill(server: ChildServer): Promise<void> {
  const exited = new Promise((resolve) =>
    server.child.exitCode !== null || server.child.signalCode !== null ? resolve(null) : server.child.once('exit', resolve),
  );
  server.child.kill('SIGKILL');
  await exited;
  await server.pool.destroy().catch(() => {});
}

/** A GET that gives up after `ms` (the server may be held). */
async function getWithin<T>(server: ChildServer, path: string, ms: number): Promise<T | undefined> {
  return Promise.race([server.get(path).catch(() => undefined), sleep(ms).then(() => undefined)]);
}

/** The RSS of the server, sampled every 100 ms until stopped: the peak (VmHWM is for the whole life). */
function sampleRss(server: ChildServer): () => number {
  let peak = 0;
  const read = () => {
    try {
      peak = Math.max(peak, server.rss().current);
    } catch {}
  };
  read();
  const timer = setInterval(read, 100);
  return () => {
    clearInterval(timer);
    read();
    return peak;
  };
}

/** Reads an answer to its end without keeping it (undici's dump() gives up past a limit and closes the connection). */
async function drain(body: AsyncIterable<Buffer>): Promise<void> {
  for await (const chunk of body) void chunk;
}

async function addBatches(server: ChildServer, token: string, batches: Buffer[]): Promise<void> {
  for (const body of batches) await server.post('/vectors/add-many', body, token);
}

interface Row {
  route: string;
  shape: string;
  'body MiB': string;
  requests: string;
  'neighbour max ms': string;
  'loop max ms': string;
  'peak RSS MiB': number;
  'memoryUsed MiB': number;
  goal: string;
  note: string;
}
const rows: Row[] = [];

/** Sends `req` again and again until the deadline or MAX_REQUESTS; the answers are drained, not parsed (this process also times the neighbour). */
async function repeat(ctx: Context, req: Request, codes: Codes): Promise<string | undefined> {
  const pool = new Pool(ctx.server.origin, { connections: 1 });
  const token = req.session === 'own' ? ctx.own : ctx.target;
  const headers: Record<string, string> = { authorization: `Bearer ${token}` };
  if (req.body) headers['content-type'] = req.contentType ?? 'application/json';
  let slowest = 0;
  let abandoned = false;
  for (let n = 0; n < MAX_REQUESTS && performance.now() < ctx.end; n++) {
    const t0 = performance.now();
    try {
      const signal = AbortSignal.timeout(Math.ceil(Math.max(1000, ctx.end - t0)));
      const res = await pool.request({ method: req.method, path: req.path, headers, body: req.body, signal, headersTimeout: 0, bodyTimeout: 0 });
      await drain(res.body);
      codes.add(res.statusCode);
      if (res.statusCode === 429) await sleep(Number(res.headers['retry-after'] ?? 1) * 1000);
    } catch (err) {
      const name = (err as Error).name;
      abandoned ||= name === 'AbortError' || name === 'TimeoutError';
      codes.add(abandoned ? 'abandoned' : ((err as NodeJS.ErrnoException).code ?? name));
    }
    slowest = Math.max(slowest, performance.now() - t0);
    if (abandoned) break;
  }
  await pool.destroy().catch(() => {});
  return `slowest answer ${slowest.toFixed(0)} ms${abandoned ? '; one abandoned at the deadline' : ''}`;
}

async function runShape(shape: Shape): Promise<void> {
  console.error(`-- ${shape.route} ${shape.name}`);
  const server = await startServer();
  const note: string[] = [];
  const codes = new Codes();
  let stage = 'starting';
  try {
    const L = new Limits((await server.get('/limits')).limits);
    const neighbour = (await server.post('/token', '')).token;
    const target = (await server.post('/token', '')).token;
    const own = (await server.post('/token', '')).token;
    const near = uniformVectors(200, NEIGHBOUR_DIM, 8);
    await server.post(
      '/vectors/add-many',
      json({ vectors: Array.from({ length: 200 }, (_, i) => ({ id: `n${i}`, vector: Array.from(rowOf(near, NEIGHBOUR_DIM, i)) })) }),
      neighbour,
    );
    stage = 'seeding';
    const batches = targetBatches(L);
    // A long synchronous build leaves the server's idle-connection closes unread: let them in before a kept-alive socket is reused.
    await sleep(100);
    await addBatches(server, target, batches);
    stage = 'building';
    const req = shape.request?.(L);
    await sleep(100);
    const bodyMiB = req?.body ? (req.body.length / MiB).toFixed(req.body.length < MiB ? 3 : 1) : '-';
    await getWithin(server, '/bench/eventloop', 5000); // resets the histogram
    const stopRss = sampleRss(server);
    const stopNeighbour = neighbourWatch(server, neighbour, json({ queryVector: queryVector(NEIGHBOUR_DIM, 2), topK: 10 }), 10);
    const ctx: Context = { L, target, own, server, end: performance.now() + SECONDS * 1000 };
    stage = 'sending';
    const said = req ? await repeat(ctx, req, codes) : await shape.run!(ctx, codes);
    if (said) note.push(said);
    stage = 'measuring';
    const waited = await stopNeighbour(GRACE_MS);
    const loop = await getWithin<{ max: number }>(server, '/bench/eventloop', waited.stuck ? 1000 : GRACE_MS);
    const usage = await getWithin<{ usage: { memoryUsedBytes: number } }>(server, '/limits', 1000);
    const peak = stopRss();
    if (waited.errors) note.push(`neighbour: ${waited.errors} failed searches (${waited.firstError})`);
    if (waited.stuck) note.push(`neighbour still waiting after ${GRACE_MS / 1000} s grace: server killed`);
    const loopMax = loop?.max ?? Number.NaN;
    const pass = waited.max <= GOAL_MS && !waited.stuck && waited.errors === 0 && loopMax <= GOAL_MS;
    rows.push({
      route: shape.route,
      shape: shape.name,
      'body MiB': bodyMiB,
      requests: codes.toString(),
      'neighbour max ms': `${waited.max.toFixed(0)}${waited.stuck ? '+' : ''} (p99 ${waited.p99.toFixed(0)}, n ${waited.count})`,
      'loop max ms': loop ? loopMax.toFixed(0) : `>=${waited.max.toFixed(0)} (no answer)`,
      'peak RSS MiB': Math.round(peak / MiB),
      'memoryUsed MiB': usage ? Math.round(usage.usage.memoryUsedBytes / MiB) : Number.NaN,
      goal: pass ? 'pass' : 'FAIL',
      note: note.join('; '),
    });
  } catch (err) {
    rows.push({
      route: shape.route,
      shape: shape.name,
      'body MiB': '-',
      requests: codes.toString(),
      'neighbour max ms': '-',
      'loop max ms': '-',
      'peak RSS MiB': Math.round(server.rss().peak / MiB),
      'memoryUsed MiB': Number.NaN,
      goal: 'FAIL',
      note: `shape stopped while ${stage}: ${(err as Error).message.slice(0, 160)}`,
    });
  } finally {
    await kill(server);
  }
}

// ---------------------------------------------------------------- churn

/** Apparent bytes of every file under `dir`, and of the largest (a session's log). */
function dirBytes(dir: string): { total: number; largest: number } {
  let total = 0;
  let largest = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile()) continue;
    try {
      const { size } = statSync(join(entry.parentPath, entry.name));
      total += size;
      largest = Math.max(largest, size);
    } catch {}
  }
  return { total, largest };
}

interface ChurnResult {
  lines: string[];
  pass: boolean;
}

/**
 * One client churns a session as fast as the rate limits and the server let
 * it (every round replaces all 1000 ids of maxIdLength, the issue's attack;
 * metadata set and patch every 10th, delete 100 every 500th, clear every
 * 2000th, reset every 5000th: rare, since they compact), and adds one new id to a
 * ledger session each round; then SIGKILL, restart on the same DATA_DIR, and
 * every acknowledged ledger id and the churned session's acknowledged count
 * are looked for.
 */
async function churn(persist: boolean): Promise<ChurnResult> {
  const dir = persist ? mkdtempSync(join(tmpdir(), 'tempvec-adversary-')) : '';
  const env: Record<string, string> = persist ? { DATA_DIR: dir } : {};
  let server = await startServer(env);
  const L = new Limits((await server.get('/limits')).limits);
  const quota = L.has('persistence.dataDirMaxBytes') ? L.num('persistence.dataDirMaxBytes', 0) : undefined;
  const logCap = L.has('persistence.maxSessionLogBytes') ? L.num('persistence.maxSessionLogBytes', 0) : undefined;
  const token = (await server.post('/token', '')).token;
  const ledger = (await server.post('/token', '')).token;
  const ids = Array.from({ length: L.num('batch.addMany', 1000) }, (_, i) => padded(`c${i}`, L.num('maxIdLength', 256)));
  const data = uniformVectors(ids.length, 32, 21);
  // A few replace bodies made once, so this process spends its time sending, not building.
  const replaces = Array.from({ length: 4 }, (_, round) =>
    json({ vectors: ids.map((id, i) => ({ id, vector: Array.from(rowOf(data, 32, i)), metadata: { round, n: i, tag: padded(`r${round}`, 40) } })) }),
  );
  const pool = new Pool(server.origin, { connections: 2 });
  const codes = new Codes();
  const send = async (path: string, body: Buffer | undefined, as = token): Promise<boolean> => {
    const headers: Record<string, string> = { authorization: `Bearer ${as}`, ...(body ? { 'content-type': 'application/json' } : {}) };
    try {
      const res = await pool.request({ method: 'POST', path, headers, body, headersTimeout: 60_000, bodyTimeout: 60_000 });
      await drain(res.body);
      codes.add(res.statusCode);
      if (res.statusCode === 429) await sleep(Number(res.headers['retry-after'] ?? 1) * 1000);
      return res.statusCode === 200;
    } catch (err) {
      codes.add((err as NodeJS.ErrnoException).code ?? 'error');
      return false;
    }
  };
  // The churned session's acknowledged contents; unknown after a write that was not acknowledged.
  let present = new Set<string>();
  let known = true;
  const acked: string[] = [];
  const usage = async () => ((await server.get('/limits')).usage as { memoryUsedBytes: number }).memoryUsedBytes;
  let diskPeak = 0;
  let filePeak = 0;
  const sampleDisk = () => {
    const { total, largest } = dirBytes(dir);
    diskPeak = Math.max(diskPeak, total);
    filePeak = Math.max(filePeak, largest);
  };
  // Once a second after the warm-up: RSS and counted growth; the worst sample is RSS's growth furthest past 1.2x the counted growth.
  let base: { rss: number; counted: number } | undefined;
  let worst = { rss: 0, counted: 0, excess: Number.NEGATIVE_INFINITY };
  const sampler = setInterval(async () => {
    if (persist) sampleDisk();
    if (!base) return;
    const rss = server.rss().current - base.rss;
    const counted = (await usage().catch(() => base!.counted)) - base.counted;
    if (rss - 1.2 * Math.max(0, counted) > worst.excess) worst = { rss, counted, excess: rss - 1.2 * Math.max(0, counted) };
  }, 1000);
  const stopRss = sampleRss(server);
  /** A write to the churned session; `apply` keeps the acknowledged contents. */
  const step = async (path: string, body: Buffer | undefined, apply: () => void) => {
    if (await send(path, body)) apply();
    else known = false;
  };
  const round = async (r: number) => {
    await step('/vectors/add-many', replaces[r % replaces.length], () => {
      present = new Set(ids);
    });
    const some = ids.slice((r * 7) % 900, ((r * 7) % 900) + 100);
    if (r % 10 === 9) {
      // Metadata writes leave the insertion order alone: only the replaces grow it.
      await step('/vectors/metadata/set', json({ id: some[0], metadata: { set: r, s: padded('m', 300) } }), () => {});
      await step('/vectors/metadata/patch', json({ id: some[0], patch: { patched: r, set: null } }), () => {});
    }
    if (r % 500 === 250) {
      await step('/vectors/delete-many', json({ ids: some }), () => {
        for (const id of some) present.delete(id);
      });
    }
    if (r % 2000 === 1999) await step('/vectors/clear', undefined, () => present.clear());
    if (r % 5000 === 4999) await step('/index/reset', undefined, () => present.clear());
    const id = `ledger-${r}`;
    if (await send('/vectors/add', json({ id, vector: [1, r % 7, 3, 4] }), ledger)) acked.push(id);
  };
  const warmEnd = performance.now() + Math.min(10, CHURN_SECONDS / 10) * 1000;
  let r = 0;
  for (; performance.now() < warmEnd && r < 1e6; r++) await round(r);
  const rss0 = server.rss().current;
  const counted0 = await usage();
  base = { rss: rss0, counted: counted0 };
  const end = performance.now() + CHURN_SECONDS * 1000;
  const t0 = performance.now();
  const firstTimed = r;
  for (; performance.now() < end && r < 1e7; r++) await round(r);
  const seconds = (performance.now() - t0) / 1000;
  // End on a full session, as the warm-up's baseline may have been taken on any state.
  await step('/vectors/add-many', replaces[r % replaces.length], () => {
    present = new Set(ids);
  });
  const rss1 = server.rss().current;
  const counted1 = await usage();
  const peak = stopRss();
  clearInterval(sampler);
  await pool.destroy();
  const rssGrowth = rss1 - rss0;
  const countedGrowth = counted1 - counted0;
  const endExcess = rssGrowth - 1.2 * Math.max(0, countedGrowth);
  if (endExcess > worst.excess) worst = { rss: rssGrowth, counted: countedGrowth, excess: endExcess };
  const allowed = 1.2 * Math.max(0, worst.counted) + CHURN_RSS_SLACK;
  const rssPass = worst.rss <= allowed;
  const lines = [
    `churn ${persist ? 'with DATA_DIR' : 'in memory'}: ${r - firstTimed} rounds in ${seconds.toFixed(0)} s (after ${firstTimed} warm-up rounds); requests ${codes}`,
    `  RSS ${(rss0 / MiB).toFixed(0)} -> ${(rss1 / MiB).toFixed(0)} MiB (growth ${(rssGrowth / MiB).toFixed(0)} MiB, peak ${(peak / MiB).toFixed(0)} MiB); memoryUsedBytes ${(counted0 / MiB).toFixed(0)} -> ${(counted1 / MiB).toFixed(0)} MiB (growth ${(countedGrowth / MiB).toFixed(1)} MiB)`,
    `  worst second: RSS growth ${(worst.rss / MiB).toFixed(0)} MiB with counted growth ${(worst.counted / MiB).toFixed(1)} MiB; goal RSS growth <= 1.2 x counted + ${CHURN_RSS_SLACK / MiB} MiB = ${(allowed / MiB).toFixed(0)} MiB: ${rssPass ? 'pass' : 'FAIL'}`,
  ];
  if (!persist) {
    await kill(server);
    return { lines, pass: rssPass };
  }
  sampleDisk();
  // SIGKILL, restart on the same directory, look for every acknowledged write.
  await kill(server);
  server = await startServer(env);
  let lost = 0;
  for (let i = 0; i < acked.length; i += 1000) {
    const answer = await server
      .post('/vectors/get-many', json({ ids: acked.slice(i, i + 1000) }), ledger)
      .catch(() => ({ notFound: acked.slice(i, i + 1000) }));
    lost += answer.notFound.length;
  }
  const count = await server.post('/vectors/count', json({}), token).catch(() => ({ count: -1 }));
  const churnLost = known ? Math.max(0, present.size - count.count) : 0;
  await kill(server);
  rmSync(dir, { recursive: true, force: true });
  const diskPass = (quota === undefined || diskPeak <= quota) && (logCap === undefined || filePeak <= logCap);
  const lostPass = lost === 0 && churnLost === 0;
  lines.push(
    `  DATA_DIR peak ${(diskPeak / MiB).toFixed(1)} MiB (${quota === undefined ? 'no persistence.dataDirMaxBytes published' : `quota ${(quota / MiB).toFixed(0)} MiB`}), ` +
      `largest file ${(filePeak / MiB).toFixed(1)} MiB (${logCap === undefined ? 'no persistence.maxSessionLogBytes published' : `cap ${(logCap / MiB).toFixed(0)} MiB`}): ` +
      `${quota === undefined && logCap === undefined ? 'reported only' : diskPass ? 'pass' : 'FAIL'}`,
    `  after SIGKILL + restart: ${lost} of ${acked.length} acknowledged ledger adds lost; churned session count ${count.count}, ${known ? `${present.size} acknowledged (${churnLost} lost)` : 'not checked (a write was not acknowledged)'}: ${lostPass ? 'pass' : 'FAIL'}`,
  );
  return { lines, pass: rssPass && diskPass && lostPass };
}

// ---------------------------------------------------------------- main

for (const shape of SHAPES) if (selected(shape.name, shape.route)) await runShape(shape);
const churns: ChurnResult[] = [];
for (const mode of CHURN_MODES) if (CHURN_SECONDS > 0 && selected('churn')) churns.push(await churn(mode === 'disk'));

console.log(
  `\nbench:adversary: MEMORY_BUDGET_BYTES ${(BUDGET / MiB).toFixed(0)} MiB, each shape about ${SECONDS} s (at most ${MAX_REQUESTS} requests), ` +
    `filter operands up to the published maxFilterNodes (${FALLBACK_NODES} from a server without it), load average ${loadavg()
      .map((x) => x.toFixed(2))
      .join(' ')}\n` +
    `goals: the neighbour's longest wait <= ${GOAL_MS} ms and the event loop's longest delay <= ${GOAL_MS} ms\n`,
);
printTable(rows.map((row) => ({ ...row })));
const failed = rows.filter((row) => row.goal !== 'pass').length;
console.log(`\n${rows.length - failed} of ${rows.length} shapes pass`);
for (const line of churns.flatMap((c) => c.lines)) console.log(line);
console.log(`\n| route | shape | body MiB | requests | neighbour max ms | loop max ms | peak RSS MiB | memoryUsed MiB | goal | note |`);
console.log('|---|---|---|---|---|---|---|---|---|---|');
for (const row of rows) console.log(`| ${Object.values(row).join(' | ')} |`);
writeResults('adversary', { rows, churn: churns.map((c) => c.lines), tables: { rows, churn: churns.flatMap((c) => c.lines) } });
process.exit(failed || churns.some((c) => !c.pass) ? 1 : 0);
