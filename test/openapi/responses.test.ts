// Every route's real responses against the schemas GET /openapi.json declares
// for them: the success, and each error code the document lists for the
// route. The last test fails when the document declares a success or an error
// that no case here produced, so a route, field or error code added later
// must come with its schema and a case here.
import { expect } from 'chai';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { newToken } from '../../src/sessions/token.js';
import { SPEC_LIMITS } from '../../src/config.js';
import { SESSION_HEAP_BYTES } from '../../src/sessions/budget-ledger.js';
import { KernelInstance } from '../../src/kernel/kernel-instance.js';
import { MODEL_FILES_PREFIX, MODEL_MANIFEST_PATH, type ModelFilesManifest } from '../../src/embedding/model-files.js';
import { startApp, type LiveApp, type Reply, type SendOptions } from '../helpers/live-app.js';
import { ResponseChecker, REVALIDATE } from '../helpers/openapi-check.js';

/** Small limits, so every limit error is cheap to provoke. */
// The clock is frozen, so a rate-limit bucket never refills: 1 request per second per token is a burst of 2,
// exactly a seeded session plus the request under test.
/** A budget whose stored share (memoryStoredMaxBytes) holds one new session and not a byte of a vector more. */
const ONE_SESSION_BUDGET = Math.ceil((SESSION_HEAP_BYTES + 1) / SPEC_LIMITS.storedShareOfBudget);

const LIMITS = {
  requestRatePerSec: 1,
  tokenRatePerMin: 0,
  maxVectorsPerSession: 3,
  maxAddManyBatch: 3,
  maxGetManyBatch: 3,
  maxDeleteManyBatch: 3,
  maxSearchManyBatch: 3,
  maxBodyBytes: 2048,
  sessionTtlMs: 60_000,
  maxImportBytes: 4096,
  maxEmbedTexts: 3,
  embeddingThreads: 1,
};
const SEED = [
  { id: 'a', vector: [1, 0, 0], metadata: { color: 'red' }, text: 'a red apple' },
  { id: 'b', vector: [0, 1, 0], metadata: { color: 'blue' }, text: 'the blue sea' },
  { id: 'c', vector: [0.5, 0.5, 0], metadata: { color: ['red', 'blue'] } },
];

type Case = [method: string, path: string, options?: SendOptions];

/** An import body: the export header (dimension 3, cosine) announcing `count` lines, then `lines`. */
const ndjson = (lines: unknown[], header: Record<string, unknown> = {}, count = lines.length): SendOptions => ({
  raw:
    [{ format: 'tempvec-export', version: 1, dimensions: 3, metric: 'cosine', vectorType: 'float32', count, ...header }, ...lines]
      .map((line) => (typeof line === 'string' ? line : JSON.stringify(line)))
      .join('\n') + '\n',
  headers: { 'content-type': 'application/x-ndjson' },
});

/** A valid request per route (against a session seeded with SEED, which is at capacity). */
const SUCCESS: Case[] = [
  ['GET', '/'],
  ['GET', '/', { headers: { accept: 'text/html' } }],
  ['GET', '/openapi.json'],
  ['GET', '/limits'],
  ['GET', '/sdk.js'],
  ['GET', '/sdk.d.ts'],
  ['GET', '/kernel.wasm'],
  ['GET', '/kernel.simd128.wasm'],
  ['GET', '/demo/passages.json'],
  ['GET', '/healthz'],
  ['GET', '/readyz'],
  ['GET', '/metrics'],
  ['POST', '/token'],
  ['GET', '/session'],
  ['POST', '/index/reset'],
  ['POST', '/vectors/has', { body: { id: 'a' } }],
  ['POST', '/vectors/has', { body: { id: 'zz' } }],
  ['POST', '/vectors/get', { body: { id: 'a' } }],
  ['POST', '/vectors/get', { body: { id: 'a', includeText: true } }],
  ['POST', '/vectors/get-many', { body: { ids: ['a', 'zz'] } }],
  ['POST', '/vectors/get-many', { body: { ids: ['a', 'c'], includeText: true } }],
  ['POST', '/vectors/metadata/get', { body: { id: 'c' } }],
  ['POST', '/vectors/metadata/set', { body: { id: 'a', metadata: { color: 'green', n: 1 } } }],
  ['POST', '/vectors/metadata/delete', { body: { id: 'a' } }],
  ['POST', '/vectors/add', { body: { id: 'a', vector: [1, 1, 0], metadata: { x: true } } }],
  [
    'POST',
    '/vectors/add-many',
    {
      body: {
        vectors: [
          { id: 'a', vector: [1, 2, 3] },
          { id: 'b', vector: [3, 2, 1] },
        ],
      },
    },
  ],
  ['POST', '/vectors/delete', { body: { id: 'a' } }],
  ['POST', '/vectors/delete-many', { body: { ids: ['a', 'b', 'zz'] } }],
  ['POST', '/vectors/clear'],
  ['POST', '/search', { body: { queryVector: [1, 0.2, 0], topK: 2, includeMetadata: true, filter: { color: 'red' } } }],
  [
    'POST',
    '/search-many',
    {
      body: {
        queryVectors: [
          [1, 0, 0],
          [0, 1, 0],
        ],
        topK: 3,
      },
    },
  ],
  ['POST', '/search', { body: { queryId: 'a', topK: 2, scoreThreshold: 0.1 } }],
  ['POST', '/search-many', { body: { queryIds: ['a', 'b'], topK: 1 } }],
  ['POST', '/search', { body: { queryText: 'red apple', includeText: true, includeMetadata: true } }],
  ['POST', '/search', { body: { queryVector: [1, 0.2, 0], queryText: 'blue', fusion: { method: 'linear', alpha: 0.3 }, includeText: true } }],
  ['POST', '/search-many', { body: { queryIds: ['a', 'b'], queryTexts: ['sea', 'apple'], fusion: { method: 'rrf', k: 10 } } }],
  ['POST', '/search-many', { body: { queryTexts: ['sea', 'apple'], topK: 1 } }],
  ['POST', '/vectors/add', { body: { id: 'a', vector: [1, 1, 0], text: 'green apple', analyzer: 'standard' } }],
  ['POST', '/vectors/delete-many', { body: { filter: { color: 'red' } } }],
  ['POST', '/vectors/add', { body: { id: 'a', vector: [1, 1, 0], text: 'green apple', ttlMs: 3_600_000 } }],
  ['POST', '/vectors/touch', { body: { ids: ['a', 'zz'] } }],
  ['POST', '/vectors/get', { body: { id: 'a' } }],
  ['POST', '/vectors/count'],
  ['POST', '/vectors/count', { body: { filter: { color: 'blue' } } }],
  ['POST', '/vectors/list', { body: { limit: 2, includeVectors: true, includeMetadata: true, includeText: true } }],
  ['POST', '/vectors/list', { body: { includeVectors: true, vectorEncoding: 'base64', filter: { color: 'red' } } }],
  ['POST', '/vectors/list', { body: { limit: 1, orderBy: { path: 'color', direction: 'desc' } } }],
  ['POST', '/vectors/facet', { body: { path: 'color' } }],
  ['POST', '/vectors/facet', { body: { path: 'n', filter: { color: 'red' }, limit: 1, ranges: [{ gte: 0, lt: 1 }, { lt: 0 }] } }],
  ['POST', '/vectors/metadata/patch', { body: { id: 'c', patch: { color: null, n: { m: 1 } } } }],
  ['GET', '/vectors/export'],
  ['POST', '/vectors/import', ndjson([{ id: 'a', vector: [0, 0, 1], metadata: { color: 'green' } }])],
  ['POST', '/embed', { body: { texts: ['a red apple', 'the blue sea'] } }],
  ['POST', '/embed', { body: { texts: ['a red apple'], vectorEncoding: 'base64' } }],
];

/** Errors specific to one route (the generic auth and body errors are made for every route below). */
const ERRORS: Case[] = [
  ['POST', '/embed', { body: { texts: ['a', 'b', 'c', 'd'] } }],
  ['POST', '/embed', { body: { texts: ['a', ''] } }],
  // The seeded session's vectors were given: it has no embedding model.
  ['POST', '/vectors/add', { body: { id: 't', text: 'stored by its text' } }],
  ['POST', '/vectors/add-many', { body: { vectors: [{ id: 't', text: 'stored by its text' }] } }],
  ['POST', '/vectors/add', { body: { id: 'a', vector: [1, 0, 0], embedding: 'use-lite-512' } }],
  ['POST', '/vectors/add-many', { body: { vectors: [{ id: 'a', vector: [1, 0, 0] }], embedding: 'use-lite-512' } }],
  ['POST', '/vectors/import', ndjson([{ id: 'a', vector: [1, 0, 0] }], { embedding: 'use-lite-512' })],
  ['POST', '/vectors/import', ndjson([{ id: 't', text: 'stored by its text' }])],
  ['POST', '/search', { body: { queryVector: { text: 'by meaning' } } }],
  ['POST', '/search-many', { body: { queryVectors: [[1, 0, 0], { text: 'by meaning' }] } }],
  ['POST', '/vectors/get', { body: { id: 'zz' } }],
  ['POST', '/vectors/get-many', { body: { ids: ['a', 'b', 'c', 'd'] } }],
  ['POST', '/vectors/metadata/get', { body: { id: 'zz' } }],
  ['POST', '/vectors/metadata/set', { body: { id: 'zz', metadata: {} } }],
  ['POST', '/vectors/metadata/delete', { body: { id: 'zz' } }],
  ['POST', '/vectors/add', { body: { id: 'a', vector: [1, 0] } }],
  ['POST', '/vectors/add', { body: { id: 'a', vector: [0, 0, 0] } }],
  ['POST', '/vectors/add', { body: { id: 'a', vector: [1, 0, 0], metric: 'l2' } }],
  ['POST', '/vectors/add', { body: { id: 'a', vector: [1, 0, 0], vectorType: 'int8' } }],
  ['POST', '/vectors/add', { body: { id: 'new', vector: [1, 0, 0] } }],
  ['POST', '/vectors/add', { body: { id: 'a', vector: [1, 0, 0], text: 'x', analyzer: 'english' } }],
  ['POST', '/vectors/add-many', { body: { vectors: [{ id: 'a', vector: [1, 0, 0], text: 'x' }], analyzer: 'english' } }],
  ['POST', '/vectors/import', ndjson([{ id: 'a', vector: [1, 0, 0], text: 'x' }], { analyzer: 'english' })],
  ['POST', '/search', { body: { queryText: '!!' } }],
  ['POST', '/search-many', { body: { queryTexts: ['apple', '...'] } }],
  ['POST', '/vectors/add-many', { body: { vectors: [{ id: 'a', vector: [1, 0] }] } }],
  ['POST', '/vectors/add-many', { body: { vectors: [{ id: 'a', vector: [0, 0, 0] }] } }],
  ['POST', '/vectors/add-many', { body: { vectors: [{ id: 'a', vector: [1, 0, 0] }], metric: 'l2' } }],
  ['POST', '/vectors/add-many', { body: { vectors: [{ id: 'a', vector: [1, 0, 0] }], vectorType: 'int8' } }],
  ['POST', '/vectors/add-many', { body: { vectors: [{ id: 'new', vector: [1, 0, 0] }] } }],
  ['POST', '/vectors/add-many', { body: { vectors: [1, 2, 3, 4].map((i) => ({ id: `n${i}`, vector: [i, 0, 0] })) } }],
  ['POST', '/vectors/delete-many', { body: { ids: ['a', 'b', 'c', 'd'] } }],
  ['POST', '/vectors/touch', { body: { ids: ['a', 'b', 'c', 'd'] } }],
  ['POST', '/search', { body: { queryVector: [1, 0] } }],
  ['POST', '/search', { body: { queryVector: [0, 0, 0] } }],
  ['POST', '/search-many', { body: { queryVectors: [[1, 0]] } }],
  ['POST', '/search-many', { body: { queryVectors: [[0, 0, 0]] } }],
  [
    'POST',
    '/search-many',
    {
      body: {
        queryVectors: [
          [1, 0, 0],
          [0, 1, 0],
          [0, 0, 1],
          [1, 1, 1],
        ],
      },
    },
  ],
  ['POST', '/search', { body: { queryId: 'zz' } }],
  ['POST', '/search-many', { body: { queryIds: ['a', 'zz'] } }],
  ['POST', '/vectors/list', { body: { cursor: 'not-a-cursor' } }],
  ['POST', '/vectors/metadata/patch', { body: { id: 'zz', patch: { x: 1 } } }],
  ['POST', '/vectors/import', ndjson([{ id: 'a', vector: [1, 0, 0] }], {}, 2)],
  ['POST', '/vectors/import', ndjson(['{"id":'])],
  ['POST', '/vectors/import', ndjson([{ id: 'a', vector: 'x' }])],
  ['POST', '/vectors/import', ndjson([{ id: 'a', vector: [1, 0] }], { dimensions: null, metric: null })],
  ['POST', '/vectors/import', ndjson([{ id: 'a', vector: [0, 0, 0] }])],
  ['POST', '/vectors/import', ndjson([{ id: 'a', vector: [1, 0, 0] }], { metric: 'l2' })],
  ['POST', '/vectors/import', ndjson([{ id: 'a', vector: [1, 0, 0] }], { vectorType: 'int8' })],
  ['POST', '/vectors/import', ndjson([{ id: 'new', vector: [1, 0, 0] }])],
  ['POST', '/vectors/import', { ...ndjson([{ id: 'a', vector: [1, 0, 0] }]), headers: { 'content-type': 'application/json' } }],
  ['POST', '/vectors/import', ndjson([{ id: 'a', vector: [1, 0, 0], metadata: { pad: 'x'.repeat(5000) } }])],
  ['POST', '/vectors/import', ndjson([{ id: 'a', vector: [1, 0, 0], metadata: { pad: 'x'.repeat(2500) } }])],
];

describe('OpenAPI conformance: real responses match the declared schemas', () => {
  let now = Date.now();
  let live: LiveApp;
  let checker: ResponseChecker;
  const operations: { method: string; path: string; op: any }[] = [];

  async function seeded(): Promise<string> {
    const token = await live.newToken();
    const res = await live.send('POST', '/vectors/add-many', { token, body: { vectors: SEED } });
    expect(res.status).to.equal(200);
    return token;
  }

  /** Send with a fresh seeded session (unless the route needs none) and check the reply. */
  async function run([method, path, options = {}]: Case): Promise<Reply> {
    const op = checker.doc.paths[path]?.[method.toLowerCase()];
    const token = op?.security?.length ? await seeded() : undefined;
    const reply = await live.send(method, path, { token, ...options });
    checker.check(method, path, reply);
    // The documented request schema must agree with the server: a body it took is valid there,
    // and a body refused as invalid JSON content (VALIDATION_ERROR) is not.
    if (options.body !== undefined && op?.requestBody) {
      const valid = checker.requestValid(method, path, options.body);
      if (reply.status < 300) expect(valid, `${method} ${path} took a body its schema refuses`).to.equal(true);
      if (reply.body?.error?.code === 'VALIDATION_ERROR') expect(valid, `${method} ${path} refused a body its schema takes`).to.equal(false);
    }
    return reply;
  }

  /** The model files' routes, with the hashes of the files on this machine. */
  const modelFile = (name: 'encoder' | 'model' | 'vocab' | 'shard') =>
    `${MODEL_FILES_PREFIX}/${name === 'shard' ? manifest.files.shards[0] : manifest.files[name]}`;
  let manifest: ModelFilesManifest;
  /** A request path for a documented one: path parameters filled in. */
  const concrete = (path: string) => (path.startsWith(`${MODEL_FILES_PREFIX}/{`) ? modelFile('vocab') : path);

  before(async () => {
    live = await startApp(LIMITS, { now: () => now });
    checker = new ResponseChecker((await live.send('GET', '/openapi.json')).body);
    manifest = (await live.send('GET', `/${MODEL_MANIFEST_PATH}`)).body;
    for (const [path, ops] of Object.entries<any>(checker.doc.paths)) {
      for (const [method, op] of Object.entries<any>(ops)) operations.push({ method: method.toUpperCase(), path, op });
    }
  });
  after(() => live.close());

  it('every success response matches its schema', async () => {
    const modelFiles: Case[] = [
      ['GET', `/${MODEL_MANIFEST_PATH}`],
      ...(['encoder', 'model', 'vocab', 'shard'] as const).map((f): Case => ['GET', modelFile(f)]),
    ];
    for (const c of [...SUCCESS, ...modelFiles]) {
      const reply = await run(c);
      expect(reply.status, `${c[0]} ${c[1]}`).to.be.oneOf([200, 201]);
    }
  });

  it('a matching If-None-Match gets 304 on the routes that send an ETag', async () => {
    for (const { method, path, op } of operations.filter((o) => o.op.responses['304'])) {
      const headers: Record<string, string> = path === '/' ? { accept: 'text/html' } : {};
      const first = await live.send(method, concrete(path), { headers });
      const etag = first.headers.get('etag');
      expect(etag, `${method} ${path}`).to.be.a('string');
      await run([method, concrete(path), { headers: { ...headers, 'if-none-match': etag!, ...REVALIDATE } }]);
      void op;
    }
  });

  it('every route-specific error matches its schema', async () => {
    const modelFiles: Case[] = [['GET', `${MODEL_FILES_PREFIX}/0000000000000000/vocab.json`]];
    for (const c of [...ERRORS, ...modelFiles]) {
      const reply = await run(c);
      expect(reply.status, `${c[0]} ${c[1]} ${JSON.stringify(c[2])}`).to.be.at.least(400);
    }
  });

  it('the authentication errors match on every route that needs a token', async () => {
    const expired = await live.newToken();
    now += LIMITS.sessionTtlMs + 1;
    for (const { method, path, op } of operations.filter((o) => o.op.security.length)) {
      const body = op.requestBody ? {} : undefined;
      checker.check(method, path, await live.send(method, path, { body }));
      checker.check(method, path, await live.send(method, path, { body, authorization: 'Bearer not-a-token' }));
      checker.check(method, path, await live.send(method, path, { body, token: expired }));
    }
  });

  it('the body errors match on every route that takes a JSON body', async () => {
    for (const { method, path } of operations.filter((o) => o.op.requestBody?.content['application/json'])) {
      await run([method, path, { raw: 'id=a', headers: { 'content-type': 'application/x-www-form-urlencoded' } }]);
      await run([method, path, { raw: '{"id":' }]);
      await run([method, path, { raw: JSON.stringify({ ids: ['x'.repeat(LIMITS.maxBodyBytes)] }) }]);
      await run([method, path, { body: { unexpected: 1 } }]);
    }
  });

  it('the per-token rate limit answers as declared on every route that needs a token', async () => {
    for (const { method, path, op } of operations.filter((o) => o.op.security.length)) {
      const body = op.requestBody ? { id: 'a' } : undefined;
      const token = await seeded();
      await live.send(method, path, { token, body });
      const reply = await live.send(method, path, { token, body });
      checker.check(method, path, reply);
      expect(reply.body.error.code, `${method} ${path}`).to.equal('RATE_LIMITED');
    }
  });

  /** Cases that need a server of their own; what they saw counts for the coverage test. */
  async function onOwnServer(
    limits: Partial<typeof LIMITS> & Record<string, number | string>,
    body: (own: LiveApp, ownChecker: ResponseChecker) => Promise<void>,
  ) {
    const own = await startApp(limits);
    try {
      const ownChecker = new ResponseChecker(checker.doc);
      await body(own, ownChecker);
      for (const key of ownChecker.seen) checker.seen.add(key);
    } finally {
      await own.close();
    }
  }

  it('POST /token at the session cap and over its rate answers as declared', () =>
    onOwnServer({ maxSessions: 1, tokenRatePerMin: 2 }, async (own, ownChecker) => {
      for (const expected of [201, 503, 429]) {
        const reply = await own.send('POST', '/token');
        ownChecker.check('POST', '/token', reply);
        expect(reply.status).to.equal(expected);
      }
    }));

  it('POST /token past the sessions of its address answers TOO_MANY_SESSIONS as declared', () =>
    onOwnServer({ maxSessionsPerAddress: 1, tokenRatePerMin: 0 }, async (own, ownChecker) => {
      for (const expected of [201, 429]) {
        const reply = await own.send('POST', '/token');
        ownChecker.check('POST', '/token', reply);
        expect(reply.status).to.equal(expected);
      }
    }));

  it('GET /metrics without METRICS_TOKEN answers UNAUTHORIZED as declared', () =>
    onOwnServer({ metricsToken: 'metrics-secret' } as never, async (own, ownChecker) => {
      const reply = await own.send('GET', '/metrics');
      ownChecker.check('GET', '/metrics', reply);
      expect(reply.body.error.code).to.equal('UNAUTHORIZED');
    }));

  it('adds over the memory budget answer SERVER_AT_CAPACITY as declared', () =>
    onOwnServer({ memoryBudgetBytes: ONE_SESSION_BUDGET }, async (own, ownChecker) => {
      const token = await own.newToken();
      const add = await own.send('POST', '/vectors/add', { token, body: SEED[0] });
      const addMany = await own.send('POST', '/vectors/add-many', { token, body: { vectors: SEED } });
      ownChecker.check('POST', '/vectors/add', add);
      ownChecker.check('POST', '/vectors/add-many', addMany);
      expect([add.body.error.code, addMany.body.error.code]).to.deep.equal(['SERVER_AT_CAPACITY', 'SERVER_AT_CAPACITY']);
    }));

  it('writes whose texts meet a changed analyzer before each turn answer ANALYZER_CHANGED as declared', () =>
    onOwnServer({}, async (own, ownChecker) => {
      const token = await own.newToken();
      // Another request of the token resets the session and fixes the other analyzer after each analysis of the texts.
      let racing = false,
        round = 0;
      const race = async () => {
        if (racing) return;
        racing = true;
        await own.send('POST', '/index/reset', { token });
        const analyzer = ++round % 2 ? 'english' : 'standard';
        await own.send('POST', '/vectors/add', { token, body: { id: 'x', vector: [1, 0, 0], text: 'runs', analyzer } });
        racing = false;
      };
      const { store } = own;
      const [encodeUpsert, encodeImport] = [store.encodeUpsert.bind(store), store.encodeImport.bind(store)];
      store.encodeUpsert = async (...args) => {
        await race();
        return encodeUpsert(...args);
      };
      store.encodeImport = async (...args) => {
        await race();
        return encodeImport(...args);
      };
      const cases: Case[] = [
        ['POST', '/vectors/add', { body: SEED[0] }],
        ['POST', '/vectors/add-many', { body: { vectors: SEED } }],
        ['POST', '/vectors/import', ndjson([{ id: 'a', vector: [1, 0, 0], text: 'x' }])],
      ];
      for (const [method, path, options] of cases) {
        const reply = await own.send(method, path, { token, ...options });
        ownChecker.check(method, path, reply);
        expect(reply.body.error?.code, path).to.equal('ANALYZER_CHANGED');
      }
    }));

  it('searches whose scratch would pass the memory budget answer SERVER_AT_CAPACITY as declared', () => {
    // 40000 rows of one float32 within a budget of what they can take (the
    // static data counted as a whole page); a filter matching all but one
    // needs a row list of 160 KB on top, more than that page and the free room.
    const rows = 40_000;
    return onOwnServer({ memoryBudgetBytes: 0, maxVectorsPerSession: rows, maxAddManyBatch: rows, requestRatePerSec: 0 }, async (own, ownChecker) => {
      const token = await own.newToken();
      const vectors = Array.from({ length: rows }, (_, i) => ({ id: `v${i}`, vector: [(i % 7) + 1], metadata: { g: i === 0 ? 0 : 1 } }));
      expect((await own.send('POST', '/vectors/add-many', { token, body: { vectors } })).status).to.equal(200);
      // Then a budget leaving the linear memory the room the comment above says (and a little for the search bodies).
      const { budget } = own.store;
      budget.limitBytes = budget.usedBytes - budget.linearMemoryBytes + KernelInstance.memoryBytesForNew(1, rows, rows) + 4096;
      const search = await own.send('POST', '/search', { token, body: { queryVector: [1], filter: { g: 1 } } });
      const searchMany = await own.send('POST', '/search-many', { token, body: { queryVectors: [[1]], filter: { g: 1 } } });
      ownChecker.check('POST', '/search', search);
      ownChecker.check('POST', '/search-many', searchMany);
      expect([search.body.error.code, searchMany.body.error.code]).to.deep.equal(['SERVER_AT_CAPACITY', 'SERVER_AT_CAPACITY']);
    });
  });

  it('POST /embed and the routes that embed, past the texts in flight, on a dying thread and past the memory budget, answer as declared', async () => {
    // Three texts of the model's whole window (about 80 ms of work), so the first call is still running when the others come.
    const texts = ['sea', 'land', 'sky'].map((word) => `${word} `.repeat(130));
    await onOwnServer(
      { maxEmbedTexts: 3, maxAddManyBatch: 3, embeddingTextsInFlightPerToken: 3, embeddingThreads: 1, requestRatePerSec: 0 },
      async (own, ownChecker) => {
        const token = await own.newToken();
        const first = own.send('POST', '/embed', { token, body: { texts } });
        while (own.embedder.busyWorkers.length === 0) await new Promise((r) => setTimeout(r, 1));
        const busy = await own.send('POST', '/embed', { token, body: { texts: ['one more'] } });
        await own.embedder.busyWorkers[0].terminate();
        const failed = await first;
        for (const reply of [busy, failed]) ownChecker.check('POST', '/embed', reply);
        expect([busy.body.error.code, failed.body.error.code]).to.deep.equal(['EMBEDDING_BUSY', 'EMBEDDING_UNAVAILABLE']);
      },
    );
    // Each route that embeds: past the texts in flight of its token (a call of /embed holds them), and on a thread that dies under it.
    const long = texts[0];
    const routes: [string, SendOptions][] = [
      ['/vectors/add', { body: { id: 't', text: long } }],
      ['/vectors/add-many', { body: { vectors: texts.map((text, i) => ({ id: `t${i}`, text })) } }],
      ['/search', { body: { queryVector: { text: long } } }],
      ['/search-many', { body: { queryVectors: texts.map((text) => ({ text })) } }],
      ['/vectors/import', ndjson([{ id: 't', text: long }], { dimensions: 512, embedding: 'use-lite-512' })],
    ];
    await onOwnServer(
      { maxEmbedTexts: 3, maxAddManyBatch: 3, embeddingTextsInFlightPerToken: 3, embeddingThreads: 1, requestRatePerSec: 0 },
      async (own, ownChecker) => {
        for (const [path, options] of routes) {
          const token = await own.newToken();
          expect((await own.send('POST', '/vectors/add', { token, body: { id: 'seed', text: 'a first text fixes the model' } })).status).to.equal(200);
          const filling = own.send('POST', '/embed', { token, body: { texts } });
          while (own.embedder.textsInFlight < 3) await new Promise((r) => setTimeout(r, 1));
          const busy = await own.send('POST', path, { token, ...options });
          await filling;
          const failing = own.send('POST', path, { token, ...options });
          while (own.embedder.busyWorkers.length === 0) await new Promise((r) => setTimeout(r, 1));
          await own.embedder.busyWorkers[0].terminate();
          const failed = await failing;
          for (const reply of [busy, failed]) ownChecker.check('POST', path, reply);
          expect([busy.body.error?.code, failed.body.error?.code], path).to.deep.equal(['EMBEDDING_BUSY', 'EMBEDDING_UNAVAILABLE']);
        }
      },
    );
    await onOwnServer({ memoryBudgetBytes: ONE_SESSION_BUDGET }, async (own, ownChecker) => {
      const reply = await own.send('POST', '/embed', { token: await own.newToken(), body: { texts } });
      ownChecker.check('POST', '/embed', reply);
      expect(reply.body.error.code).to.equal('SERVER_AT_CAPACITY');
    });
  });

  it('the routes that embed, with EMBEDDING_URL answering what the protocol does not allow, answer 502 as declared', async () => {
    // A real endpoint on 127.0.0.1 whose every answer is not JSON.
    const endpoint = createServer((_req, res) => res.writeHead(200).end('not json'));
    await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
    const url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/v1/embeddings`;
    const model = { embeddingUrl: url, embeddingModel: 'openapi-endpoint', embeddingDimensions: 3, requestRatePerSec: 0 };
    const routes: [string, SendOptions][] = [
      ['/embed', { body: { texts: ['a'] } }],
      ['/vectors/add', { body: { id: 't', text: 'a' } }],
      ['/vectors/add-many', { body: { vectors: [{ id: 't', text: 'a' }] } }],
      ['/search', { body: { queryVector: { text: 'a' } } }],
      ['/search-many', { body: { queryVectors: [{ text: 'a' }] } }],
      ['/vectors/import', ndjson([{ id: 't', text: 'a' }], { embedding: 'openapi-endpoint' })],
    ];
    try {
      await onOwnServer(model, async (own, ownChecker) => {
        for (const [path, options] of routes) {
          const token = await own.newToken();
          const seed = await own.send('POST', '/vectors/add', { token, body: { id: 'seed', vector: [1, 0, 0], embedding: 'openapi-endpoint' } });
          expect(seed.status).to.equal(200);
          const reply = await own.send('POST', path, { token, ...options });
          ownChecker.check('POST', path, reply);
          expect([reply.status, reply.body.error?.code], path).to.deep.equal([502, 'EMBEDDING_UPSTREAM_ERROR']);
        }
      });
    } finally {
      endpoint.closeAllConnections();
      endpoint.close();
    }
  });

  it('GET /vectors/export with vectorEncoding base64, or an unknown one, answers as declared', async () => {
    const token = await seeded();
    const base64 = await live.send('GET', '/vectors/export?vectorEncoding=base64', { token });
    checker.check('GET', '/vectors/export', base64);
    expect(base64.status).to.equal(200);
    expect(base64.text.trim().split('\n')).to.have.length(1 + SEED.length);
    const bad = await live.send('GET', '/vectors/export?vectorEncoding=hex', { token: await seeded() });
    checker.check('GET', '/vectors/export', bad);
    expect(bad.body.error.details.issues[0].path).to.equal('/vectorEncoding');
  });

  it('answers past MAX_ANSWER_BYTES answer ANSWER_TOO_LARGE as declared', () =>
    onOwnServer({ maxAnswerBytes: 2100 }, async (own, ownChecker) => {
      const token = await own.newToken();
      expect((await own.send('POST', '/vectors/add-many', { token, body: { vectors: SEED } })).status).to.equal(200);
      const cases: Case[] = [
        ['POST', '/search', { body: { queryVector: [1, 0, 0], topK: 3, includeMetadata: true } }],
        [
          'POST',
          '/search-many',
          {
            body: {
              queryVectors: [
                [1, 0, 0],
                [0, 1, 0],
              ],
              topK: 3,
              includeMetadata: true,
            },
          },
        ],
        ['POST', '/vectors/get-many', { body: { ids: ['a', 'b', 'c'] } }],
        ['POST', '/vectors/list', { body: { includeVectors: true, includeMetadata: true } }],
      ];
      for (const [method, path, options] of cases) {
        const reply = await own.send(method, path, { token, ...options });
        ownChecker.check(method, path, reply);
        expect(reply.body.error.code, path).to.equal('ANSWER_TOO_LARGE');
      }
    }));

  it('large reads whose answer in flight would pass the memory budget answer SERVER_AT_CAPACITY as declared', () =>
    onOwnServer({ memoryBudgetBytes: 0 }, async (own, ownChecker) => {
      const token = await own.newToken();
      const vectors = ['a', 'b', 'c'].map((id, i) => ({ id, vector: Array.from({ length: 1000 }, (_, j) => Math.sin(i * 1000 + j) / 3) }));
      expect((await own.send('POST', '/vectors/add-many', { token, body: { vectors } })).status).to.equal(200);
      // Room for the small request bodies, not for a streamed answer's window.
      own.store.budget.limitBytes = own.store.budget.usedBytes + 100_000;
      for (const [method, path, options] of [
        ['POST', '/vectors/get-many', { body: { ids: ['a', 'b', 'c'] } }],
        ['POST', '/vectors/list', { body: { includeVectors: true } }],
      ] as Case[]) {
        const reply = await own.send(method, path, { token, ...options });
        ownChecker.check(method, path, reply);
        expect(reply.body.error.code, path).to.equal('SERVER_AT_CAPACITY');
      }
    }));

  it('an import over the memory budget answers SERVER_AT_CAPACITY as declared', () =>
    onOwnServer({ memoryBudgetBytes: ONE_SESSION_BUDGET }, async (own, ownChecker) => {
      const token = await own.newToken();
      const reply = await own.send('POST', '/vectors/import', { token, ...ndjson([{ id: 'a', vector: [1, 0, 0] }]) });
      ownChecker.check('POST', '/vectors/import', reply);
      expect(reply.body.error.code).to.equal('SERVER_AT_CAPACITY');
    }));

  it('with DATA_DIR, a change past MAX_SESSION_LOG_BYTES or DATA_DIR_MAX_BYTES answers SESSION_LOG_FULL or DISK_QUOTA_EXCEEDED as declared', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tempvec-disk-caps-'));
    const limits = { ...LIMITS, requestRatePerSec: 0, dataDir };
    try {
      const first = await startApp(limits);
      const token = await first.newToken();
      expect((await first.send('POST', '/vectors/add', { token, body: { id: 'a', vector: [1, 0, 0], ttlMs: 3_600_000 } })).status).to.equal(200);
      await first.close();
      // Caps at the log's size: every change is one byte too many.
      const logBytes = statSync(join(dataDir, readdirSync(dataDir).find((name) => name.endsWith('.log'))!)).size;
      for (const [caps, code] of [
        [{ maxSessionLogBytes: logBytes }, 'SESSION_LOG_FULL'],
        [{ dataDirMaxBytes: logBytes }, 'DISK_QUOTA_EXCEEDED'],
      ] as const) {
        const own = await startApp({ ...limits, ...caps });
        try {
          const ownChecker = new ResponseChecker(checker.doc);
          const changes: [string, SendOptions][] = [
            ['/vectors/add', { body: { id: 'b', vector: [0, 1, 0] } }],
            ['/vectors/add-many', { body: { vectors: [{ id: 'b', vector: [0, 1, 0] }] } }],
            ['/vectors/import', ndjson([{ id: 'b', vector: [0, 1, 0] }])],
            ['/vectors/metadata/set', { body: { id: 'a', metadata: { n: 1 } } }],
            ['/vectors/metadata/patch', { body: { id: 'a', patch: { n: 1 } } }],
            ['/vectors/metadata/delete', { body: { id: 'a' } }],
            ['/vectors/delete', { body: { id: 'a' } }],
            ['/vectors/delete-many', { body: { ids: ['a'] } }],
            ['/vectors/touch', { body: { ids: ['a'] } }],
          ];
          for (const [path, options] of changes) {
            const reply = await own.send('POST', path, { token, ...options });
            ownChecker.check('POST', path, reply);
            expect([reply.status, reply.body?.error?.code], path).to.deep.equal([507, code]);
          }
          for (const key of ownChecker.seen) checker.seen.add(key);
        } finally {
          await own.close();
        }
      }
    } finally {
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('an instance still restoring its sessions answers INSTANCE_UNAVAILABLE as declared', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'tempvec-restoring-'));
    const own = await startApp({ ...LIMITS, dataDir }, { deferRestore: true });
    try {
      const ownChecker = new ResponseChecker(checker.doc);
      const send = async (method: string, path: string, options: SendOptions = {}) => {
        const reply = await own.send(method, path, options);
        ownChecker.check(method, path, reply);
        expect(reply.body?.error?.code, `${method} ${path}`).to.equal('INSTANCE_UNAVAILABLE');
      };
      await send('GET', '/readyz');
      await send('POST', '/token');
      for (const { method, path, op } of operations.filter((o) => o.op.security.length)) {
        await send(method, path, { token: newToken(), body: op.requestBody ? {} : undefined });
      }
      for (const key of ownChecker.seen) checker.seen.add(key);
      await own.restore();
      expect((await own.send('GET', '/readyz')).status).to.equal(200);
    } finally {
      await own.close();
      rmSync(dataDir, { recursive: true, force: true });
    }
  });

  it('the routes that take no body refuse one as declared', async () => {
    for (const path of ['/token', '/index/reset', '/vectors/clear']) {
      const reply = await run(['POST', path, { body: {} }]);
      expect(reply.body.error.code, path).to.equal('VALIDATION_ERROR');
      expect(reply.body.error.details.issues[0].message, path).to.include('takes no body');
    }
  });

  it("headers over Node's 16 KiB limit get the declared 431 on every route", async () => {
    for (const { method, path } of operations) {
      const reply = await live.send(method, path, { headers: { 'x-padding': 'x'.repeat(17 * 1024) } });
      expect(reply.status, `${method} ${path}`).to.equal(431);
      checker.check(method, path, reply);
    }
  });

  it('unknown routes and wrong methods answer the documented error body', async () => {
    for (const [method, path, code] of [
      ['GET', '/nope', 'NOT_FOUND'],
      ['GET', '/search', 'METHOD_NOT_ALLOWED'],
      ['DELETE', '/token', 'METHOD_NOT_ALLOWED'],
    ]) {
      const reply = await live.send(method, path);
      expect(reply.body.error.code).to.equal(code);
      checker.validateComponent('ErrorResponse', reply.body);
    }
  });

  it('every declared success and error code was produced by a case above', () => {
    const missing: string[] = [];
    for (const { method, path, op } of operations) {
      for (const [status, response] of Object.entries<any>(op.responses)) {
        const key = `${method.toLowerCase()} ${path} ${status}`;
        const codes: string[] = response.content?.['application/json']?.schema?.allOf?.[1]?.properties?.error?.properties?.code?.enum ?? [];
        if (!codes.length) {
          if (!checker.seen.has(key)) missing.push(key);
          continue;
        }
        // INTERNAL_ERROR has no honest trigger; every other declared code must have been seen.
        for (const code of codes.filter((c) => c !== 'INTERNAL_ERROR')) if (!checker.seen.has(`${key} ${code}`)) missing.push(`${key} ${code}`);
      }
    }
    expect(missing).to.deep.equal([]);
  });
});
