// npm run bench:mcp: issue 37's goals for POST /mcp, against the compiled
// server (bench/lib/server-process.mjs).
// 1. recall against the equivalent POST /search: one session of MCP_TEXTS
//    texts stored by remember, the same MCP_QUERIES queries sent both ways in
//    turn over one kept-alive connection each (raw JSON-RPC for recall, so
//    both are timed from the wire to the parsed answer), hybrid (the query
//    embedded) and keywords alone (no embedding: the protocol's own cost
//    shows); also recall through the SDK's Client. Goal: recall at most 1.2x.
// 2. bench:adversary's shapes that map onto the tools, sent through MCP
//    again and again for MCP_SECONDS each (rate limits on, as npm start runs),
//    while a neighbour session searches every 10 ms: recall and forget and
//    list_memories with the worst filters, recall with the longest query text
//    at topK max, remember of the largest batch up to the body cap, with wide
//    metadata; each also sent as the HTTP request the tool stands for (its
//    route, the same work), in the same run, as a baseline. Goal: the
//    neighbour's longest wait and the server's longest event-loop delay at
//    most 50 ms.
// MCP_SECONDS (default 10, 3 with --quick), MCP_TEXTS (default 500, 100 with
// --quick), MCP_QUERIES (default 100, 30 with --quick). Loopback only.
import { loadavg } from 'node:os';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Pool } from 'undici';
import { filters, json, Limits, padded, queryVector, scriptText, targetBatches, wideMetadata } from './lib/adversary-shapes.js';
import { startChildServer, launcherNodeFlags, type ChildServer } from './lib/child-server.js';
import { rowOf, uniformVectors } from './lib/data.js';
import { Codes, printTable, quick } from './lib/measure.js';
import { neighbourWatch } from './lib/neighbour.js';
import { writeResults } from './lib/results.js';

const SECONDS = Number(process.env.MCP_SECONDS ?? (quick ? 3 : 10));
const TEXTS = Number(process.env.MCP_TEXTS ?? (quick ? 100 : 500));
const QUERIES = Number(process.env.MCP_QUERIES ?? (quick ? 30 : 100));
const GOAL_RATIO = 1.2;
const GOAL_MS = 50;
const NEIGHBOUR_DIM = 16;
const MCP_HEADERS = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const WORDS = 'river storm market bread engine garden letter winter doctor music planet silver coffee island forest camera train window paper ocean'.split(' ');
/** A sentence of 8 to 20 words from a seeded walk over WORDS. */
function sentence(seed: number): string {
  const words: string[] = [];
  for (let i = 0, x = seed * 7919 + 13; i < 8 + (seed % 13); i++, x = (x * 48271) % 2147483647) words.push(WORDS[x % WORDS.length]);
  return words.join(' ');
}

const rpc = (name: string, args: unknown, id = 1) => json({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } });

/** One request's wall time, its answer parsed; throws on an error status or a tool error. */
async function timed(pool: Pool, path: string, body: Buffer, headers: Record<string, string>): Promise<number> {
  const t0 = performance.now();
  const res = await pool.request({ method: 'POST', path, headers, body });
  const answer = (await res.body.json()) as { result?: { isError?: boolean } };
  const ms = performance.now() - t0;
  if (res.statusCode !== 200 || answer.result?.isError) throw new Error(`${path}: ${res.statusCode} ${JSON.stringify(answer).slice(0, 300)}`);
  return ms;
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];

interface RecallRow {
  mode: string;
  queries: number;
  'POST /search ms (p50)': number;
  'recall ms (p50)': number;
  ratio: number;
  'recall via the SDK Client ms (p50)': number | string;
  'SDK ratio': number | string;
  goal: string;
}

async function recallAgainstSearch(): Promise<RecallRow[]> {
  const server = await startChildServer({});
  try {
    const token = (await server.post('/token', '')).token as string;
    const auth = { authorization: `Bearer ${token}` };
    const texts = Array.from({ length: TEXTS }, (_, i) => sentence(i));
    const mcp = new Pool(server.origin, { connections: 1 });
    const http = new Pool(server.origin, { connections: 1 });
    for (let i = 0; i < texts.length; i += 250) await timed(mcp, '/mcp', rpc('remember', { texts: texts.slice(i, i + 250) }), { ...MCP_HEADERS, ...auth });
    const client = new Client({ name: 'bench', version: '1' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${server.origin}/mcp`), { requestInit: { headers: auth } }));
    const rows: RecallRow[] = [];
    for (const mode of ['hybrid', 'keywords'] as const) {
      const search: number[] = [];
      const recall: number[] = [];
      const sdk: number[] = [];
      for (let q = 0; q < QUERIES + 5; q++) {
        const query = sentence(100_000 + q)
          .split(' ')
          .slice(0, 4)
          .join(' ');
        const body = mode === 'hybrid' ? { queryVector: { text: query }, queryText: query } : { queryText: query };
        // In turn, so drift in the machine's load falls on both alike; the first 5 warm up.
        const s = await timed(http, '/search', json({ ...body, topK: 10, includeMetadata: true, includeText: true }), {
          'content-type': 'application/json',
          ...auth,
        });
        const r = await timed(mcp, '/mcp', rpc('recall', { query, mode, topK: 10 }), { ...MCP_HEADERS, ...auth });
        const t0 = performance.now();
        await client.callTool({ name: 'recall', arguments: { query, mode, topK: 10 } });
        const c = performance.now() - t0;
        if (q < 5) continue;
        search.push(s);
        recall.push(r);
        sdk.push(c);
      }
      const ratio = median(recall) / median(search);
      rows.push({
        mode,
        queries: QUERIES,
        'POST /search ms (p50)': median(search),
        'recall ms (p50)': median(recall),
        ratio,
        'recall via the SDK Client ms (p50)': median(sdk),
        'SDK ratio': median(sdk) / median(search),
        goal: ratio <= GOAL_RATIO ? 'pass' : 'FAIL',
      });
    }
    await client.close();
    await mcp.close();
    await http.close();
    return rows;
  } finally {
    await server.stop();
  }
}

// ---------------------------------------------------------------- adversary shapes through MCP

interface Shape {
  tool: string;
  name: string;
  /** The tool's arguments, from the server's limits. */
  args(L: Limits): Record<string, any>;
  session?: 'target' | 'own';
}

const WORST = '$in arrays';
/** What remember may send in one body: the MCP body cap (the spec's maxMcpBodyBytes, or MAX_BODY_BYTES when lower), less room for the frame. */
const rememberBytes = (L: Limits) => Math.floor(L.num('mcp.maxBodyBytes', 1 << 20) * 0.9);
const SHAPES: Shape[] = [
  { tool: 'recall', name: `filter ${WORST}, topK max`, args: (L) => ({ query: 'abc def', topK: L.num('topK.max', 100), filter: filters(L)[WORST] }) },
  { tool: 'recall', name: 'filter deep $not/$or', args: (L) => ({ query: 'abc def', filter: filters(L)['deep $not/$or'] }) },
  {
    tool: 'recall',
    name: 'longest query text (cjk), topK max',
    args: (L) => ({ query: scriptText('cjk', L.num('text.maxQueryTextBytes', 4096), 7), topK: L.num('topK.max', 100) }),
  },
  { tool: 'forget', name: `filter ${WORST} (matches none)`, args: (L) => ({ filter: filters(L)[WORST] }) },
  { tool: 'list_memories', name: `filter ${WORST}, limit max`, args: (L) => ({ filter: filters(L)[WORST], limit: L.num('list.max', 1000) }) },
  {
    tool: 'remember',
    name: 'max batch, texts up to the body cap',
    session: 'own',
    args: (L) => {
      const count = L.num('batch.addMany', 1000);
      const bytes = Math.min(L.num('maxTextBytes', 32768), Math.floor(rememberBytes(L) / count) - 40);
      return { texts: Array.from({ length: count }, (_, i) => scriptText('latin', bytes, i)), ids: Array.from({ length: count }, (_, i) => `r${i}`) };
    },
  },
  {
    tool: 'remember',
    name: 'max batch, deep+wide metadata',
    session: 'own',
    args: (L) => {
      const count = L.num('batch.addMany', 1000);
      const idLength = Math.min(L.num('maxIdLength', 256), 64);
      const bytes = Math.min(L.num('maxMetadataBytes', 8192) - 16, Math.floor(rememberBytes(L) / count) - idLength - 200);
      return {
        texts: Array.from({ length: count }, (_, i) => sentence(i)),
        ids: Array.from({ length: count }, (_, i) => padded(`m${i}`, idLength)),
        metadata: Array.from({ length: count }, (_, i) => wideMetadata(L, i, bytes)),
      };
    },
  },
];

/** The same request to the HTTP route the tool runs (recall: POST /search with queryVector {text} and queryText), for a baseline in the same run. */
function routeOf(tool: string, args: Record<string, any>): { path: string; body: unknown } {
  if (tool === 'recall') {
    const { query, ...rest } = args;
    return { path: '/search', body: { ...rest, queryVector: { text: query }, queryText: query, includeMetadata: true, includeText: true } };
  }
  if (tool === 'forget') return { path: '/vectors/delete-many', body: args };
  if (tool === 'list_memories') return { path: '/vectors/list', body: { ...args, includeMetadata: true, includeText: true } };
  const { texts, ids, metadata } = args as { texts: string[]; ids: string[]; metadata?: unknown[] };
  return { path: '/vectors/add-many', body: { vectors: texts.map((text, i) => ({ id: ids[i], text, ...(metadata ? { metadata: metadata[i] } : {}) })) } };
}

interface ShapeRow {
  tool: string;
  shape: string;
  via: string;
  'body MiB': string;
  requests: string;
  'neighbour max ms': string;
  'loop max ms': number;
  goal: string;
}

/** The target session: bench:adversary's (wide metadata, text in four scripts), stored by text (embedded), so recall runs hybrid. */
async function seedTarget(server: ChildServer, L: Limits, token: string): Promise<void> {
  for (const batch of targetBatches(L)) {
    const { vectors } = JSON.parse(batch.toString()) as { vectors: { vector?: unknown }[] };
    for (const record of vectors) delete record.vector;
    await server.post('/vectors/add-many', json({ vectors }), token);
  }
}

/** `body` sent to `path` again and again until the deadline; answers drained, their statuses (and tool errors' codes) counted. */
async function repeat(server: ChildServer, token: string, path: string, body: Buffer, end: number, codes: Codes): Promise<void> {
  const pool = new Pool(server.origin, { connections: 1 });
  const headers = { ...MCP_HEADERS, authorization: `Bearer ${token}` };
  while (performance.now() < end) {
    const res = await pool.request({ method: 'POST', path, headers, body, headersTimeout: 0, bodyTimeout: 0 });
    const text = await res.body.text();
    codes.add(res.statusCode === 200 && text.includes('"isError":true') ? `${/"code":"(\w+)"/.exec(text)?.[1] ?? 'tool error'}` : res.statusCode);
    if (res.statusCode === 429) await sleep(Number(res.headers['retry-after'] ?? 1) * 1000);
  }
  await pool.destroy().catch(() => {});
}

async function adversaryThroughMcp(): Promise<ShapeRow[]> {
  const env = { BENCH_RATE_LIMITS: 'on', MEMORY_BUDGET_BYTES: String(2 * 1024 ** 3) };
  const server = await startChildServer(env, launcherNodeFlags(env));
  const rows: ShapeRow[] = [];
  try {
    const L = new Limits((await server.get('/limits')).limits);
    const [neighbour, target, own] = [
      (await server.post('/token', '')).token,
      (await server.post('/token', '')).token,
      (await server.post('/token', '')).token,
    ];
    const near = uniformVectors(200, NEIGHBOUR_DIM, 8);
    await server.post(
      '/vectors/add-many',
      json({ vectors: Array.from({ length: 200 }, (_, i) => ({ id: `n${i}`, vector: Array.from(rowOf(near, NEIGHBOUR_DIM, i)) })) }),
      neighbour,
    );
    await seedTarget(server, L, target);
    for (const shape of SHAPES) {
      const args = shape.args(L);
      const route = routeOf(shape.tool, args);
      // The route first, then the tool: the same work, the one through MCP, the other as the API takes it.
      for (const [via, path, body] of [
        [route.path, route.path, json(route.body)],
        ['/mcp', '/mcp', rpc(shape.tool, args)],
      ] as const) {
        console.error(`-- ${shape.tool} ${shape.name} via ${via}`);
        await sleep(200);
        await server.get('/bench/eventloop'); // starts the histogram over
        const stop = neighbourWatch(server, neighbour, json({ queryVector: queryVector(NEIGHBOUR_DIM, 2), topK: 10 }), 10);
        const codes = new Codes();
        await repeat(server, shape.session === 'own' ? own : target, path, body, performance.now() + SECONDS * 1000, codes);
        const waited = await stop(30_000);
        const loop = (await server.get('/bench/eventloop')) as { max: number };
        const pass = waited.max <= GOAL_MS && loop.max <= GOAL_MS && waited.errors === 0 && !waited.stuck;
        rows.push({
          tool: shape.tool,
          shape: shape.name,
          via,
          'body MiB': (body.length / 1024 ** 2).toFixed(body.length < 1024 ** 2 ? 3 : 1),
          requests: codes.toString(),
          'neighbour max ms': `${waited.max.toFixed(0)} (p99 ${waited.p99.toFixed(0)}, n ${waited.count})`,
          'loop max ms': loop.max,
          goal: pass ? 'pass' : 'FAIL',
        });
      }
    }
  } finally {
    await server.stop();
  }
  return rows;
}

const recall = await recallAgainstSearch();
console.log(`recall (POST /mcp) against the same POST /search, ${TEXTS} texts, p50 of ${QUERIES} queries (goal: ratio <= ${GOAL_RATIO})`);
printTable(recall as never);
const adversary = await adversaryThroughMcp();
console.log(`bench:adversary's shapes through MCP, ${SECONDS} s each, a neighbour searching every 10 ms (goal: <= ${GOAL_MS} ms)`);
printTable(adversary as never);
console.log(
  `load average ${loadavg()
    .map((x) => x.toFixed(2))
    .join(' ')}`,
);
console.log(`results: ${writeResults('mcp', { tables: { recall, adversary } })}`);
