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
import { connect, type Socket } from 'node:net';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import { Pool } from 'undici';
import { loadConfig } from '../src/config.js';
import { heapLimitMiB } from '../src/limits/heap-limit.js';
import { startChildServer, startScriptNodeFlags, type ChildServer } from './lib/child-server.js';
import { rng, rowOf, uniformVectors } from './lib/data.js';
import { printTable, quick, writeResults } from './lib/measure.js';
import { neighbourWatch } from './lib/neighbour.js';

const MiB = 1024 * 1024;
const SECONDS = Number(process.env.ADVERSARY_SECONDS ?? (quick ? 2 : 10));
const GRACE_MS = Number(process.env.ADVERSARY_GRACE_SECONDS ?? 30) * 1000;
const MAX_REQUESTS = Number(process.env.ADVERSARY_MAX_REQUESTS ?? 200);
const CHURN_SECONDS = Number(process.env.ADVERSARY_CHURN_SECONDS ?? (quick ? 20 : 600));
/** memory: RSS against what the budget counts, as fast as writes go; disk: the same with DATA_DIR, then disk against the quota and a SIGKILL + restart. */
const CHURN_MODES = (process.env.ADVERSARY_CHURN_MODES ?? 'memory,disk').split(',');
const BUDGET = Number(process.env.ADVERSARY_BUDGET_BYTES ?? 2 * 1024 * MiB);
const FALLBACK_NODES = Number(process.env.ADVERSARY_FALLBACK_NODES ?? 2000);
const ONLY = process.env.ADVERSARY_ONLY?.split(',');
const GOAL_MS = 50;
/** RSS the churn may add beyond 1.2x what the budget counts: allocator and heap slack, JIT code, log buffers. */
const CHURN_RSS_SLACK = 64 * MiB;
/** The target session every read shape works on: rows, dimensions, metadata bytes per row (about the issue's 7 KB). */
const TARGET_ROWS = 1000;
const TARGET_DIM = 64;
const NEIGHBOUR_DIM = 16;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const json = (x: unknown) => Buffer.from(JSON.stringify(x));
const selected = (...names: string[]) => !ONLY || ONLY.some((w) => names.some((n) => n.includes(w)));

// ---------------------------------------------------------------- limits

/** GET /limits' `limits`, with readers that fall back to today's values when a name is not (yet) published. */
class Limits {
  constructor(readonly raw: Record<string, any>) {}
  /** The number at a dotted path, or `fallback` when absent. */
  num(path: string, fallback: number): number {
    const value = path.split('.').reduce<any>((o, k) => o?.[k], this.raw);
    return typeof value === 'number' ? value : fallback;
  }
  has(path: string): boolean {
    return typeof path.split('.').reduce<any>((o, k) => o?.[k], this.raw) === 'number';
  }
  /** Operands a filter may hold: maxFilterNodes less the nodes around them, or the fallback while it is unpublished. */
  operands(around: number): number {
    return this.has('maxFilterNodes') ? Math.max(1, this.num('maxFilterNodes', 0) - around) : FALLBACK_NODES;
  }
  /** Bytes of each of `count` query texts in one request: maxQueryTextBytes, shared out under maxQueryTextBytesPerRequest when published. */
  queryTextBytes(count: number): number {
    const one = this.num('text.maxQueryTextBytes', 4096);
    return Math.min(one, Math.floor(this.num('text.maxQueryTextBytesPerRequest', one * count) / count));
  }
}

// ---------------------------------------------------------------- data

/** A string of `length` characters from `seed` (ids at maxIdLength, long strings past maxIndexedValueBytes). */
const padded = (seed: string, length: number) => (seed + '_').padEnd(length, 'x').slice(0, length);

/** Words of each script; the target's texts use them, so query terms hit postings. */
const SCRIPTS = {
  latin: { alphabet: 'abcdefghijklmnopqrstuvwxyz', joiner: ' ' },
  cyrillic: { alphabet: 'абвгдежзийклмнопрстуфхцчшщыэюя', joiner: ' ' },
  cjk: { alphabet: Array.from({ length: 200 }, (_, i) => String.fromCodePoint(0x4e00 + i * 7)).join(''), joiner: '' },
  emoji: { alphabet: Array.from({ length: 80 }, (_, i) => String.fromCodePoint(0x1f600 + i)).join(''), joiner: ' ' },
} as const;
type Script = keyof typeof SCRIPTS;

/** Text of at most `bytes` UTF-8 bytes: words of the script (CJK: characters run together, so every pair is a bigram term). */
function scriptText(script: Script, bytes: number, seed: number): string {
  const { alphabet, joiner } = SCRIPTS[script];
  const chars = Array.from(alphabet);
  const next = rng(seed);
  let out = '';
  let used = 0;
  for (let n = 0; n < 1_000_000; n++) {
    const length = script === 'cjk' || script === 'emoji' ? 1 : 3 + Math.floor(next() * 4);
    let word = '';
    for (let i = 0; i < length; i++) word += chars[Math.floor(next() * Math.min(chars.length, 40))];
    const piece = (out ? joiner : '') + word;
    const size = Buffer.byteLength(piece);
    if (used + size > bytes) break;
    out += piece;
    used += size;
  }
  return out;
}

/** Metadata as deep (maxJsonDepth) and wide (maxMetadataKeys) as allowed, about `bytes` as JSON, with the fields the filter shapes read. */
function wideMetadata(L: Limits, i: number, bytes: number): Record<string, unknown> {
  const depth = L.num('maxJsonDepth', 8);
  let deep: Record<string, unknown> = { leaf: i };
  for (let d = 2; d < depth; d++) deep = { d: deep };
  const m: Record<string, unknown> = {
    n: i,
    tag: `t${i % 10}`,
    a: [i, i + 1],
    o: { x: i },
    s: padded(`long${i}`, L.num('maxIndexedValueBytes', 256) + 144),
    deep,
  };
  const keysLeft = L.num('maxMetadataKeys', 256) - 7 - (depth - 1); // n, tag, a, o, o.x, s, deep and its chain
  const room = bytes - JSON.stringify(m).length;
  const per = Math.max(1, Math.floor(room / Math.max(1, keysLeft)) - 10);
  for (let k = 0; k < keysLeft && JSON.stringify(m).length + per + 12 < bytes; k++) m[`k${k}`] = padded(`${i}.${k}`, per);
  return m;
}

const targetId = (L: Limits, i: number) => padded(`t${i}`, L.num('maxIdLength', 256));

/** The target session's add-many batches: TARGET_ROWS x TARGET_DIM, metadata of about 7 KB, 1 KB of text in every script. */
function targetBatches(L: Limits): Buffer[] {
  const data = uniformVectors(TARGET_ROWS, TARGET_DIM, 3);
  const metadataBytes = Math.min(7000, L.num('maxMetadataBytes', 8192) - 64);
  const batches: Buffer[] = [];
  for (let i = 0; i < TARGET_ROWS; i += 200) {
    const vectors = [];
    for (let j = i; j < Math.min(TARGET_ROWS, i + 200); j++) {
      const text = (Object.keys(SCRIPTS) as Script[]).map((s, k) => scriptText(s, 256, j * 4 + k)).join(' ');
      vectors.push({ id: targetId(L, j), vector: Array.from(rowOf(data, TARGET_DIM, j)), metadata: wideMetadata(L, j, metadataBytes), text });
    }
    batches.push(json({ vectors }));
  }
  return batches;
}

const queryVector = (dim: number, seed: number) => Array.from(rowOf(uniformVectors(1, dim, seed), dim, 0));

// ---------------------------------------------------------------- filters

/** Nesting depth as the server counts it: {} and [] are 1, {"a":{}} is 2, a scalar 0. */
function depthOf(value: unknown): number {
  if (value === null || typeof value !== 'object') return 0;
  return 1 + Math.max(0, ...Object.values(value).map(depthOf));
}

/** `n` operands of a kind that the index cannot answer today (arrays, objects, long strings), matching no row. */
function operands(L: Limits, kind: 'array' | 'object' | 'long string', n: number): unknown[] {
  const long = L.num('maxIndexedValueBytes', 256) + 144;
  return Array.from({ length: n }, (_, i) => (kind === 'array' ? [-1 - i] : kind === 'object' ? { x: -1 - i } : padded(`miss${i}`, long)));
}

/** Object operands are object keys: maxFilterKeys bounds them today, besides maxFilterNodes. */
const objectOperands = (L: Limits) => Math.min(L.operands(2), L.num('maxFilterKeys', 64) - 2);

/** The worst filters by operator and operand kind, each within maxJsonDepth, maxFilterKeys and maxFilterNodes. */
function filters(L: Limits): Record<string, Record<string, unknown>> {
  const n = L.operands(2);
  const keys = L.num('maxFilterKeys', 64);
  const long = L.num('maxIndexedValueBytes', 256) + 144;
  // $or of `clauses` clauses (2 keys each: the clause and its operator) sharing the operands.
  const clauses = Math.max(1, Math.floor((keys - 1) / 2));
  const share = Math.max(1, Math.floor(n / clauses));
  // $not, $or and $and in turn around the long-string $in, as deep as maxJsonDepth allows.
  const depth = L.num('maxJsonDepth', 8);
  let nested: Record<string, unknown> = { s: { $in: operands(L, 'long string', Math.max(1, n - depth)) } };
  for (let k = 0; k < depth; k++) {
    const wrapped = [{ $not: nested }, { $or: [nested] }, { $and: [nested] }][k % 3];
    if (depthOf(wrapped) > depth) break;
    nested = wrapped;
  }
  return {
    '$in arrays': { a: { $in: operands(L, 'array', n) } },
    '$nin arrays': { a: { $nin: operands(L, 'array', n) } },
    '$in objects': { o: { $in: operands(L, 'object', objectOperands(L)) } },
    '$in long strings': { s: { $in: operands(L, 'long string', n) } },
    '$or of $in arrays': { $or: Array.from({ length: clauses }, () => ({ a: { $in: operands(L, 'array', share) } })) },
    'deep $not/$or': nested,
    'long string range': { s: { $gt: padded('zzz', long) }, tag: { $ne: 'none' } },
    'object equality': { o: { x: -5 }, deep: { d: { d: { leaf: -1 } } } },
  };
}

// ---------------------------------------------------------------- shapes

interface Context {
  L: Limits;
  /** The target session (TARGET_ROWS rows of wide metadata and text). */
  target: string;
  /** A second session of the attacker's own, empty, for writes that configure it. */
  own: string;
  server: ChildServer;
  /** The shape's deadline (performance.now()). */
  end: number;
}

interface Request {
  method: 'GET' | 'POST';
  path: string;
  body?: Buffer;
  contentType?: string;
  /** The target session's (default) or the attacker's own. */
  session?: 'target' | 'own';
}

interface Shape {
  route: string;
  name: string;
  /** The request sent again and again; built before the neighbour starts. */
  request?: (L: Limits) => Request;
  /** Or a load of its own (slow bodies); answers its status codes. */
  run?: (ctx: Context, codes: Codes) => Promise<string | undefined>;
}

const post = (path: string, body: unknown, session: 'target' | 'own' = 'target'): Request => ({ method: 'POST', path, body: json(body), session });

/** search-many query texts in one script, as many and as long as allowed. */
function queryTexts(L: Limits, script: Script): string[] {
  const count = L.num('batch.searchMany', 64);
  return Array.from({ length: count }, (_, q) => scriptText(script, L.queryTextBytes(count), 1000 + q));
}

/** An NDJSON import: a header and `records`. */
function ndjson(dim: number, records: string[]): Buffer {
  const header = JSON.stringify({ format: 'tempvec-export', version: 1, dimensions: dim, metric: 'cosine', vectorType: 'float32', count: records.length });
  return Buffer.from([header, ...records].join('\n') + '\n');
}

/** Add-many of `count` records at `dim` as big as maxBodyBytes allows, each with `extra` (metadata, text). */
function bigAddMany(L: Limits, dim: number, count: number, extra: (i: number, bytesLeft: number) => Record<string, unknown>): Buffer {
  const data = uniformVectors(count, dim, 11);
  const vectorJsonBytes = dim * 22;
  const perRecord = Math.floor((L.num('maxBodyBytes', 32 * MiB) * 0.97) / count) - vectorJsonBytes - L.num('maxIdLength', 256) - 64;
  const vectors = Array.from({ length: count }, (_, i) => ({
    id: padded(`w${i}`, L.num('maxIdLength', 256)),
    vector: Array.from(rowOf(data, dim, i)),
    ...extra(i, perRecord),
  }));
  return json({ vectors });
}

const importRequest = (body: Buffer): Request => ({ method: 'POST', path: '/vectors/import', body, contentType: 'application/x-ndjson', session: 'own' });

function filterShapes(): Shape[] {
  const names = Object.keys(filters(new Limits({})));
  const shapes: Shape[] = [];
  for (const name of names) {
    const f = (L: Limits) => filters(L)[name];
    shapes.push({ route: '/vectors/count', name, request: (L) => post('/vectors/count', { filter: f(L) }) });
  }
  const worst = '$in arrays';
  const f = (L: Limits) => filters(L)[worst];
  shapes.push(
    {
      route: '/vectors/list',
      name: `${worst}, all includes`,
      request: (L) => post('/vectors/list', { filter: f(L), limit: L.num('list.max', 1000), includeVectors: true, includeMetadata: true }),
    },
    { route: '/search', name: worst, request: (L) => post('/search', { queryVector: queryVector(TARGET_DIM, 5), topK: L.num('topK.max', 100), filter: f(L) }) },
    {
      route: '/search-many',
      name: `${worst}, max queries`,
      request: (L) =>
        post('/search-many', { queryVectors: Array.from({ length: L.num('batch.searchMany', 64) }, (_, q) => queryVector(TARGET_DIM, q)), filter: f(L) }),
    },
    { route: '/vectors/delete-many', name: `filter ${worst} (matches none)`, request: (L) => post('/vectors/delete-many', { filter: f(L) }) },
  );
  return shapes;
}

function textShapes(): Shape[] {
  const shapes: Shape[] = [];
  for (const script of Object.keys(SCRIPTS) as Script[]) {
    shapes.push({
      route: '/search-many',
      name: `queryTexts ${script}`,
      request: (L) => post('/search-many', { queryTexts: queryTexts(L, script), topK: L.num('topK.max', 100) }),
    });
  }
  shapes.push(
    {
      route: '/search-many',
      name: 'hybrid cjk, includes',
      request: (L) => {
        const texts = queryTexts(L, 'cjk');
        return post('/search-many', {
          queryTexts: texts,
          queryVectors: texts.map((_, q) => queryVector(TARGET_DIM, q)),
          topK: L.num('topK.max', 100),
          includeMetadata: true,
        });
      },
    },
    {
      route: '/search',
      name: 'queryText cjk',
      request: (L) => post('/search', { queryText: scriptText('cjk', L.num('text.maxQueryTextBytes', 4096), 7), topK: L.num('topK.max', 100) }),
    },
  );
  return shapes;
}

function writeShapes(): Shape[] {
  const maxDim = (L: Limits) => L.num('maxDimensions', 1024);
  const batch = (L: Limits) => L.num('batch.addMany', 1000);
  return [
    {
      route: '/vectors/add-many',
      name: 'max dims, deep+wide metadata (replace)',
      request: (L) => ({
        ...post('/vectors/add-many', null, 'own'),
        body: bigAddMany(L, maxDim(L), batch(L), (i, left) => ({ metadata: wideMetadata(L, i, Math.min(L.num('maxMetadataBytes', 8192) - 16, left)) })),
      }),
    },
    ...(['cyrillic', 'cjk'] as Script[]).map(
      (script): Shape => ({
        route: '/vectors/add-many',
        name: `texts ${script} up to the body cap (replace)`,
        request: (L) => ({
          ...post('/vectors/add-many', null, 'own'),
          body: bigAddMany(L, 4, batch(L), (i, left) => ({ text: scriptText(script, Math.min(L.num('maxTextBytes', 32768), left), i) })),
        }),
      }),
    ),
    {
      route: '/vectors/add',
      name: 'max dims, metadata, text',
      request: (L) =>
        post(
          '/vectors/add',
          {
            id: targetId(L, 1),
            vector: queryVector(TARGET_DIM, 1),
            metadata: wideMetadata(L, 1, L.num('maxMetadataBytes', 8192) - 16),
            text: scriptText('cjk', L.num('maxTextBytes', 32768), 1),
          },
          'target',
        ),
    },
    {
      route: '/vectors/metadata/set',
      name: 'deep+wide',
      request: (L) => post('/vectors/metadata/set', { id: targetId(L, 2), metadata: wideMetadata(L, 2, L.num('maxMetadataBytes', 8192) - 16) }),
    },
    {
      route: '/vectors/metadata/patch',
      name: 'deep+wide patch',
      request: (L) => post('/vectors/metadata/patch', { id: targetId(L, 3), patch: wideMetadata(L, 9, L.num('maxMetadataBytes', 8192) - 16) }),
    },
    {
      route: '/vectors/get-many',
      name: 'max ids, with text',
      request: (L) =>
        post('/vectors/get-many', { ids: Array.from({ length: L.num('batch.getMany', 1000) }, (_, i) => targetId(L, i % TARGET_ROWS)), includeText: true }),
    },
    {
      route: '/vectors/delete-many',
      name: 'max ids (none stored)',
      request: (L) =>
        post('/vectors/delete-many', { ids: Array.from({ length: L.num('batch.deleteMany', 1000) }, (_, i) => padded(`gone${i}`, L.num('maxIdLength', 256))) }),
    },
    { route: '/vectors/has', name: 'max id', request: (L) => post('/vectors/has', { id: targetId(L, 4) }) },
    { route: '/vectors/get', name: 'max id, with text', request: (L) => post('/vectors/get', { id: targetId(L, 4), includeText: true }) },
    { route: '/vectors/metadata/get', name: 'max id', request: (L) => post('/vectors/metadata/get', { id: targetId(L, 4) }) },
    { route: '/vectors/delete', name: 'max id (not stored)', request: (L) => post('/vectors/delete', { id: padded('gone', L.num('maxIdLength', 256)) }) },
    { route: '/vectors/export', name: 'target session', request: () => ({ method: 'GET', path: '/vectors/export' }) },
    { route: '/session', name: 'target session', request: () => ({ method: 'GET', path: '/session' }) },
    { route: '/metrics', name: 'scrape', request: () => ({ method: 'GET', path: '/metrics' }) },
    { route: '/limits', name: 'read', request: () => ({ method: 'GET', path: '/limits' }) },
    { route: '/vectors/clear', name: 'clear, own session', request: () => ({ method: 'POST', path: '/vectors/clear', session: 'own' }) },
    { route: '/index/reset', name: 'reset, own session', request: () => ({ method: 'POST', path: '/index/reset', session: 'own' }) },
  ];
}

function importShapes(): Shape[] {
  return [
    {
      route: '/vectors/import',
      name: 'one huge line (64 MiB text)',
      request: (L) => {
        const bytes = Math.min(L.num('maxImportBytes', 512 * MiB) - 1024, 64 * MiB);
        return importRequest(ndjson(4, [`{"id":"huge","vector":[1,2,3,4],"text":"${'x'.repeat(bytes)}"}`]));
      },
    },
    {
      route: '/vectors/import',
      name: 'one line 1e6 deep',
      request: () => importRequest(ndjson(4, [`{"id":"deep","vector":[1,2,3,4],"metadata":{"a":${'['.repeat(1e6)}${']'.repeat(1e6)}}}`])),
    },
    {
      route: '/vectors/import',
      name: 'maxVectors lines, wide metadata',
      request: (L) => {
        const rows = Math.min(L.num('maxVectorsPerSession', 50_000), Math.floor(L.num('maxImportBytes', 512 * MiB) / 9000));
        const data = uniformVectors(1, 32, 1);
        const line = (i: number) => JSON.stringify({ id: `i${i}`, vector: Array.from(data), metadata: wideMetadata(L, i, 3000) });
        return importRequest(
          ndjson(
            32,
            Array.from({ length: rows }, (_, i) => line(i)),
          ),
        );
      },
    },
  ];
}

/** Raw sockets, each announcing `length` bytes and sending them at `bytesPerSec`, `perToken` on each of `tokens` tokens, until the deadline. */
async function slowBodies(
  ctx: Context,
  codes: Codes,
  path: string,
  type: string,
  length: number,
  tokens: string[],
  perToken: number,
  bytesPerSec: number,
): Promise<string> {
  const { port } = new URL(ctx.server.origin);
  const sockets: Socket[] = [];
  for (const token of tokens) {
    for (let k = 0; k < perToken; k++) {
      const socket = connect(Number(port), '127.0.0.1');
      socket.on('error', (err: NodeJS.ErrnoException) => codes.add(err.code ?? 'error'));
      socket.on('data', (chunk: Buffer) => {
        const m = /^HTTP\/1\.1 (\d+)/.exec(chunk.toString('latin1'));
        if (m) codes.add(m[1]);
      });
      socket.write(`POST ${path} HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${token}\r\nContent-Type: ${type}\r\nContent-Length: ${length}\r\n\r\n[`);
      sockets.push(socket);
    }
  }
  const piece = Buffer.alloc(Math.max(1, Math.ceil(bytesPerSec / 4)), 0x20);
  let usage = { bodiesInFlightBytes: 0, memoryUsedBytes: 0 };
  for (let tick = 0; performance.now() < ctx.end && tick < 100_000; tick++) {
    for (const s of sockets) if (!s.destroyed) s.write(piece);
    await sleep(250);
    if (tick % 4 === 3) usage = (await ctx.server.get('/limits').catch(() => ({ usage }))).usage;
  }
  const open = sockets.filter((s) => !s.destroyed).length;
  for (const s of sockets) s.destroy();
  return `${open} of ${sockets.length} still open at the end; bodiesInFlightBytes ${(usage.bodiesInFlightBytes / MiB).toFixed(0)} MiB`;
}

/** Tokens for the slow bodies (POST /token is rate-limited per address: at most 40 here). */
async function tokens(server: ChildServer, count: number): Promise<string[]> {
  const out: string[] = [];
  for (let i = 0; i < Math.min(40, count); i++) out.push((await server.post('/token', '')).token);
  return out;
}

function admissionShapes(): Shape[] {
  return [
    {
      route: '/vectors/add-many',
      name: 'slow bodies, max in flight',
      run: async (ctx, codes) => {
        const perToken = ctx.L.num('admission.maxBodiesInFlightPerToken', 8);
        const all = await tokens(ctx.server, Math.ceil(ctx.L.num('admission.maxBodiesInFlight', 256) / perToken));
        return slowBodies(
          ctx,
          codes,
          '/vectors/add-many',
          'application/json',
          ctx.L.num('maxBodyBytes', 32 * MiB),
          all,
          perToken,
          ctx.L.num('admission.minBodyBytesPerSec', 16384),
        );
      },
    },
    {
      route: '/vectors/import',
      name: 'slow imports, max in flight + 1',
      run: async (ctx, codes) => {
        const count = ctx.L.num('admission.maxImportsInFlight', 8) + 1;
        const all = await tokens(ctx.server, count);
        return slowBodies(
          ctx,
          codes,
          '/vectors/import',
          'application/x-ndjson',
          ctx.L.num('maxImportBytes', 512 * MiB),
          all,
          1,
          ctx.L.num('admission.minBodyBytesPerSec', 16384),
        );
      },
    },
  ];
}

const SHAPES: Shape[] = [...filterShapes(), ...textShapes(), ...writeShapes(), ...importShapes(), ...admissionShapes()];

// ---------------------------------------------------------------- runner

class Codes {
  readonly seen = new Map<string, number>();
  add(code: number | string) {
    this.seen.set(String(code), (this.seen.get(String(code)) ?? 0) + 1);
  }
  toString() {
    return (
      [...this.seen]
        .sort()
        .map(([c, n]) => `${c}x${n}`)
        .join(' ') || '-'
    );
  }
}

/** A fresh server as `npm start` runs it: its Node flags, the heap limit its launcher sets from the budget, rate limits on. */
async function startServer(env: Record<string, string> = {}): Promise<ChildServer> {
  const full = { MEMORY_BUDGET_BYTES: String(BUDGET), BENCH_RATE_LIMITS: 'on', ...env };
  const heap = heapLimitMiB(loadConfig({ ...process.env, ...full }));
  return startChildServer(full, [...startScriptNodeFlags(), ...(heap ? [`--max-old-space-size=${heap}`] : [])]);
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
    `filter operands ${FALLBACK_NODES} while maxFilterNodes is unpublished, load average ${loadavg()
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
writeResults('adversary', { rows, churn: churns.map((c) => c.lines) });
process.exit(failed || churns.some((c) => !c.pass) ? 1 : 0);
