// bench:adversary's shapes: for every route, the worst request within the
// limits a server publishes (GET /limits, read at run time: a limit not
// published yet falls back to today's value). One table of shapes as data
// (route, name, and the function that builds its request from the limits);
// bench/adversary.bench.ts runs them, test/bench/adversary-shapes.test.ts
// checks them against the server's own schemas.
import { connect, type Socket } from 'node:net';
import type { ChildServer } from './child-server.js';
import { rng, rowOf, uniformVectors } from './data.js';
import type { Codes } from './measure.js';

const MiB = 1024 * 1024;
/** Operands of the filter shapes while the server publishes no maxFilterNodes (the figure by default). */
const FALLBACK_NODES = Number(process.env.ADVERSARY_FALLBACK_NODES ?? 2000);
/** The target session every read shape works on: rows and dimensions. */
export const TARGET_ROWS = 1000;
export const TARGET_DIM = 64;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
export const json = (x: unknown) => Buffer.from(JSON.stringify(x));

/** GET /limits' `limits`, with readers that fall back to today's values when a name is not (yet) published. */
export class Limits {
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
export const padded = (seed: string, length: number) => (seed + '_').padEnd(length, 'x').slice(0, length);

/** Words of each script; the target's texts use them, so query terms hit postings. */
export const SCRIPTS = {
  latin: { alphabet: 'abcdefghijklmnopqrstuvwxyz', joiner: ' ' },
  cyrillic: { alphabet: 'абвгдежзийклмнопрстуфхцчшщыэюя', joiner: ' ' },
  cjk: { alphabet: Array.from({ length: 200 }, (_, i) => String.fromCodePoint(0x4e00 + i * 7)).join(''), joiner: '' },
  emoji: { alphabet: Array.from({ length: 80 }, (_, i) => String.fromCodePoint(0x1f600 + i)).join(''), joiner: ' ' },
} as const;
export type Script = keyof typeof SCRIPTS;

/** Text of at most `bytes` UTF-8 bytes: words of the script (CJK: characters run together, so every pair is a bigram term). */
export function scriptText(script: Script, bytes: number, seed: number): string {
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
export function wideMetadata(L: Limits, i: number, bytes: number): Record<string, unknown> {
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
  // Each key adds `,"kN":"value"`: its name, its value and 6 bytes (ASCII only).
  let size = JSON.stringify(m).length;
  const per = Math.max(1, Math.floor((bytes - size) / Math.max(1, keysLeft)) - 12);
  for (let k = 0; k < keysLeft - 1 && size + per + 12 <= bytes; k++) {
    m[`k${k}`] = padded(`${i}.${k}`, per);
    size += `k${k}`.length + per + 6;
  }
  // The last key takes what is left, so the object is `bytes` long give or take a byte.
  if (bytes - size - 7 > 0) m.z = 'z'.repeat(bytes - size - 7);
  return m;
}

const targetId = (L: Limits, i: number) => padded(`t${i}`, L.num('maxIdLength', 256));

/** The target session's add-many batches: TARGET_ROWS x TARGET_DIM, metadata of about 7 KB, 1 KB of text in every script. */
export function targetBatches(L: Limits): Buffer[] {
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

export const queryVector = (dim: number, seed: number) => Array.from(rowOf(uniformVectors(1, dim, seed), dim, 0));

// ---------------------------------------------------------------- filters

/** Nesting depth as the server counts it: {} and [] are 1, {"a":{}} is 2, a scalar 0. */
export function depthOf(value: unknown): number {
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
export function filters(L: Limits): Record<string, Record<string, unknown>> {
  const n = L.operands(2);
  const keys = L.num('maxFilterKeys', 64);
  const long = L.num('maxIndexedValueBytes', 256) + 144;
  // $or of `clauses` clauses (2 keys each: the clause and its operator; a node each) sharing the operands.
  const clauses = Math.max(1, Math.min(Math.floor((keys - 1) / 2), Math.floor(n / 2)));
  const share = Math.max(1, Math.floor((n - clauses) / clauses));
  // $not, $or and $and in turn, as deep as maxJsonDepth allows, around long strings: $in under an
  // even number of $not, $nin under an odd one, so that it matches no row either way.
  const depth = L.num('maxJsonDepth', 8);
  const wrappers: ((f: object) => object)[] = [(f) => ({ $not: f }), (f) => ({ $or: [f] }), (f) => ({ $and: [f] })];
  const leaf = (op: string) => ({ s: { [op]: operands(L, 'long string', Math.max(1, n - depth)) } });
  let used: ((f: object) => object)[] = [];
  for (let k = 0; k < depth && depthOf(used.reduce((f, w) => w(f), { s: { $in: [''] } } as object)) <= depth; k++) used = [...used, wrappers[k % 3]];
  used = used.slice(0, -1);
  const nots = used.filter((w) => w === wrappers[0]).length;
  const nested = used.reduce((f, w) => w(f), leaf(nots % 2 ? '$nin' : '$in') as object);
  return {
    '$in arrays': { a: { $in: operands(L, 'array', n) } },
    '$nin arrays': { a: { $nin: operands(L, 'array', n) } },
    '$in objects': { o: { $in: operands(L, 'object', objectOperands(L)) } },
    '$in long strings': { s: { $in: operands(L, 'long string', n) } },
    '$or of $in arrays': { $or: Array.from({ length: clauses }, () => ({ a: { $in: operands(L, 'array', share) } })) },
    'deep $not/$or': nested as Record<string, unknown>,
    'long string range': { s: { $gt: padded('zzz', long) }, tag: { $ne: 'none' } },
    'object equality': { o: { x: -5 }, deep: { d: { d: { leaf: -1 } } } },
  };
}

// ---------------------------------------------------------------- shapes

export interface Context {
  L: Limits;
  /** The target session (TARGET_ROWS rows of wide metadata and text). */
  target: string;
  /** A second session of the attacker's own, empty, for writes that configure it. */
  own: string;
  server: ChildServer;
  /** The shape's deadline (performance.now()). */
  end: number;
}

export interface Request {
  method: 'GET' | 'POST';
  path: string;
  body?: Buffer;
  contentType?: string;
  /** The target session's (default) or the attacker's own. */
  session?: 'target' | 'own';
}

export interface Shape {
  route: string;
  name: string;
  /** The request sent again and again; built before the neighbour starts. */
  request?: (L: Limits) => Request;
  /** Or a load of its own (slow bodies); answers its status codes. */
  run?: (ctx: Context, codes: Codes) => Promise<string | undefined>;
}

const post = (path: string, body: unknown, session: 'target' | 'own' = 'target'): Request => ({ method: 'POST', path, body: json(body), session });

/** search-many query texts in one script, as many and as long as allowed. */
export function queryTexts(L: Limits, script: Script): string[] {
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

export const SHAPES: Shape[] = [...filterShapes(), ...textShapes(), ...writeShapes(), ...importShapes(), ...admissionShapes()];
