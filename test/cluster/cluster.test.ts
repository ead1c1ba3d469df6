// Three instances behind nginx (npm run cluster's launcher), one cluster for
// the whole file: tokens spread over the instances and route back to theirs,
// every route and the SDK work through the proxy, errors keep the service's
// JSON shape, and a killed instance costs only its own sessions until it is
// restarted on its DATA_DIR.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { INTERNAL_PATHS } from '../../src/cluster/nginx-config.js';
import { loadConfig } from '../../src/config.js';
import { NOT_IN_OPENAPI } from '../../src/openapi/operations.js';
import { startCluster, type TestCluster } from '../helpers/cluster.js';
import { expectError, expectOk, type ApiResponse } from '../helpers/http.js';
import { encodeFloat32Base64 } from '../../src/schemas/base64-float32.js';
import { seededRng, randomVectors } from '../helpers/random.js';
import { expectSameTopK } from '../helpers/reference.js';

type Sdk = typeof import('../../src/sdk/index.js');

/** Above nginx's 1 MiB body buffer: larger bodies go through its temporary files. */
const MAX_BODY_BYTES = 3 * 1024 * 1024;
/** An import may be larger: nginx lets one through up to this, as the instances do. */
const MAX_IMPORT_BYTES = 6 * 1024 * 1024;
const INSTANCE = 'x-tempvec-instance';
const idOf = (token: string) => token.split('.')[0];
/** The parts of an error body that do not depend on timing. */
const shape = (res: ApiResponse) => ({
  status: res.status,
  type: res.headers.get('content-type'),
  success: res.body?.success,
  error: res.body?.error,
  auth: res.headers.get('www-authenticate'),
});

describe('cluster: 3 instances behind nginx', function () {
  this.timeout(60_000);
  let c: TestCluster;
  let tokens: string[] = [];

  before(async () => {
    c = await startCluster(3, { REQUEST_RATE_PER_SEC: '20', MAX_BODY_BYTES: String(MAX_BODY_BYTES), MAX_IMPORT_BYTES: String(MAX_IMPORT_BYTES) });
  });
  after(() => c?.close());

  it('spreads 30 POST /token over all 3 instances, each token naming its own', async () => {
    const seen = new Map<string, number>();
    tokens = [];
    for (let i = 0; i < 30; i++) {
      const res = await c.request('POST', '/token');
      const token = expectOk(res, 201).token as string;
      expect(token).to.match(/^i[123]\.[A-Za-z0-9_-]{43}$/);
      expect(res.headers.get(INSTANCE)).to.equal(idOf(token));
      seen.set(idOf(token), (seen.get(idOf(token)) ?? 0) + 1);
      tokens.push(token);
    }
    expect([...seen.keys()].sort()).to.deep.equal(['i1', 'i2', 'i3']);
  });

  it('answers every later request of a session from the instance that holds it', async () => {
    const rng = seededRng(18);
    await Promise.all(
      tokens.map(async (token, t) => {
        const vectors = randomVectors(rng, 4, 3);
        const add = await c.request('POST', '/vectors/add-many', { token, body: { vectors: vectors.map((vector, i) => ({ id: `t${t}-${i}`, vector })) } });
        expectOk(add);
        const read = await c.request('POST', '/vectors/get-many', { token, body: { ids: [`t${t}-0`, `t${t}-3`] } });
        expect(expectOk(read).vectors.map((v: { id: string }) => v.id)).to.deep.equal([`t${t}-0`, `t${t}-3`]);
        for (const res of [add, read]) expect(res.headers.get(INSTANCE)).to.equal(idOf(token));
      }),
    );
  });

  it('serves every route of the OpenAPI document through the proxy', async () => {
    const doc = expectOk(await c.request('GET', '/openapi.json').then((r) => ({ ...r, body: { success: true, ...r.body } }))) as {
      paths: Record<string, Record<string, unknown>>;
    };
    const token = await c.token();
    expectOk(
      await c.request('POST', '/vectors/add-many', {
        token,
        body: {
          vectors: [
            { id: 'a', vector: [1, 0], metadata: { k: 1 } },
            { id: 'b', vector: [0, 1] },
          ],
        },
      }),
    );
    const ndjson = '{"format":"tempvec-export","version":1,"dimensions":2,"metric":"cosine","vectorType":"float32","count":1}\n{"id":"e","vector":[1,2]}\n';
    // A model file is requested at its hashed URL, named in the document by its template.
    const manifest = (await c.request('GET', '/models/use-lite-512/manifest.json')).body as { files: { vocab: string } };
    const vocab = new URL(manifest.files.vocab, 'http://any/models/use-lite-512/manifest.json').pathname; // relative to the manifest
    const cases: [string, string, unknown?, Record<string, string>?, string?][] = [
      ['GET', '/'],
      ['GET', '/openapi.json'],
      ['GET', '/limits'],
      ['GET', '/sdk.js'],
      ['GET', '/sdk.d.ts'],
      ['GET', '/kernel.wasm'],
      ['GET', '/kernel.simd128.wasm'],
      ['GET', '/demo/passages.json'],
      ['GET', '/models/use-lite-512/manifest.json'],
      ['GET', '/models/use-lite-512/{hash}/{file}', undefined, undefined, vocab],
      ['POST', '/token'],
      ['POST', '/embed', { texts: ['a sentence'] }],
      ['GET', '/session'],
      ['POST', '/vectors/has', { id: 'a' }],
      ['POST', '/vectors/get', { id: 'a' }],
      ['POST', '/vectors/get-many', { ids: ['a', 'z'] }],
      ['POST', '/vectors/metadata/get', { id: 'a' }],
      ['POST', '/vectors/metadata/set', { id: 'a', metadata: { k: 2 } }],
      ['POST', '/vectors/metadata/delete', { id: 'a' }],
      ['POST', '/vectors/add', { id: 'c', vector: [1, 1] }],
      ['POST', '/vectors/add-many', { vectors: [{ id: 'd', vector: [2, 1] }] }],
      ['POST', '/search', { queryVector: [1, 0], topK: 2 }],
      [
        'POST',
        '/search-many',
        {
          queryVectors: [
            [1, 0],
            [0, 1],
          ],
        },
      ],
      ['POST', '/vectors/delete', { id: 'c' }],
      ['POST', '/vectors/delete-many', { ids: ['d'] }],
      ['POST', '/vectors/touch', { ids: ['b'] }],
      ['POST', '/vectors/count', { filter: { k: 2 } }],
      ['POST', '/vectors/facet', { path: 'k' }],
      ['POST', '/vectors/list', { limit: 1 }],
      ['POST', '/vectors/metadata/patch', { id: 'b', patch: { k: 3 } }],
      ['GET', '/vectors/export'],
      ['POST', '/vectors/import', ndjson, { 'content-type': 'application/x-ndjson' }],
      ['POST', '/vectors/clear'],
      ['POST', '/index/reset'],
      ['POST', '/mcp', { jsonrpc: '2.0', id: 1, method: 'tools/list' }, { accept: 'application/json, text/event-stream' }],
    ];
    const documented = Object.entries(doc.paths)
      .flatMap(([path, ops]) => Object.keys(ops).map((m) => `${m.toUpperCase()} ${path}`))
      .sort();
    const internal = INTERNAL_PATHS.map((path) => `GET ${path}`);
    const undocumented = NOT_IN_OPENAPI.map((r) => `${r.method.toUpperCase()} ${r.path}`);
    expect([...cases.map(([m, p]) => `${m} ${p}`), ...internal].sort()).to.deep.equal([...documented, ...undocumented].sort());
    for (const [method, path, body, headers, url] of cases) {
      const res = await c.request(method, url ?? path, { token, body, headers });
      expect(res.status, `${method} ${path}: ${res.text.slice(0, 200)}`).to.be.oneOf([200, 201]);
      expect(res.headers.get(INSTANCE), `${method} ${path}`).to.match(/^i[123]$/);
      // POST /mcp needs a token too (NOT_IN_OPENAPI: no operation says so); its answer is JSON-RPC, without Server-Timing.
      if (path === '/mcp') expect(res.headers.get(INSTANCE), `${method} ${path}`).to.equal(idOf(token));
      else if (doc.paths[path][method.toLowerCase()] && (doc.paths[path][method.toLowerCase()] as { security: unknown[] }).security.length) {
        expect(res.headers.get(INSTANCE), `${method} ${path}`).to.equal(idOf(token));
        expect(res.headers.get('server-timing'), `${method} ${path}`).to.match(/^requestLatency;dur=[0-9.]+/);
      }
    }
  });

  it('answers /healthz, /readyz and /metrics on the internal listener only (any instance, or /<id>/... for one), 404 on the public port', async () => {
    for (const path of INTERNAL_PATHS) {
      expectError(await c.request('GET', path), 404, 'NOT_FOUND');
      const any = await c.internal(path);
      expect(any.status, path).to.equal(200);
      expect(any.headers.get(INSTANCE), path).to.match(/^i[123]$/);
      for (const id of ['i1', 'i2', 'i3']) {
        const one = await c.internal(`/${id}${path}`);
        expect(one.status, `/${id}${path}`).to.equal(200);
        expect(one.headers.get(INSTANCE)).to.equal(id);
      }
    }
    expect((await c.internal('/metrics')).text).to.match(/^# HELP /m);
    expectError(await c.internal('/token'), 404, 'NOT_FOUND');
  });

  it("divides the machine's default memory budget among the instances", async () => {
    const { limits } = expectOk(await c.request('GET', '/limits'));
    expect(limits.memoryBudgetBytes).to.equal(Math.floor(loadConfig({}).memoryBudgetBytes / 3));
  });

  it('passes the headers clients read: ETag and 304, Cache-Control, Allow, Retry-After', async () => {
    const sdk = await c.request('GET', '/sdk.js');
    const again = await c.request('GET', '/sdk.js', { headers: { 'if-none-match': sdk.headers.get('etag')!, 'cache-control': 'max-age=0' } });
    expect(again.status).to.equal(304);
    expect((await c.request('POST', '/token')).headers.get('cache-control')).to.equal('no-store');
    const wrong = await c.request('GET', '/search', { token: tokens[0] });
    expectError(wrong, 405, 'METHOD_NOT_ALLOWED');
    expect(wrong.headers.get('allow')).to.include('POST');
    // 20 requests a second with a burst of 40: 150 at once pass it, and get Retry-After.
    const token = await c.token();
    const answers = await Promise.all(Array.from({ length: 150 }, () => c.request('GET', '/session', { token })));
    const limited = answers.find((r) => r.status === 429)!;
    expectError(limited, 429, 'RATE_LIMITED');
    expect(limited.headers.get('retry-after')).to.match(/^[1-9][0-9]*$/);
  });

  it('serves an SDK from /sdk.js whose client and LocalIndex work through the proxy', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tempvec-sdk-'));
    let sdk: Sdk;
    try {
      writeFileSync(join(dir, 'sdk.mjs'), (await c.request('GET', '/sdk.js')).text);
      sdk = await import(pathToFileURL(join(dir, 'sdk.mjs')).href);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    const client = new sdk.TempvecClient({ baseUrl: c.cluster.url });
    const local = await sdk.LocalIndex.load({ wasmUrl: `${c.cluster.url}/kernel.wasm` });
    const rng = seededRng(7);
    const records = randomVectors(rng, 50, 8).map((vector, i) => ({ id: `v${i}`, vector: new Float32Array(vector) }));
    await client.addMany(records, { metric: 'l2' });
    local.addMany(records, { metric: 'l2' });
    for (const query of randomVectors(rng, 5, 8)) {
      const remote = await client.search(new Float32Array(query), { topK: 5 });
      const mine = local.search(new Float32Array(query), { topK: 5 });
      expect(remote.results.map((h) => h.id)).to.deep.equal(mine.results.map((h) => h.id));
    }
    expect(idOf(client.token!)).to.match(/^i[123]$/);
  });

  it('answers an unknown instance prefix exactly as an unknown token, and garbage as the service does', async () => {
    const [, secret] = tokens.find((t) => idOf(t) !== 'i2')!.split('.');
    const unknownToken = await c.request('GET', '/session', { token: `i1.${'A'.repeat(43)}` });
    const unknownPrefix = await c.request('GET', '/session', { token: `zz9.${secret}` });
    expectError(unknownToken, 401, 'INVALID_TOKEN');
    expect(shape(unknownPrefix)).to.deep.equal(shape(unknownToken));
    expectError(await c.request('GET', '/session', { authorization: 'Bearer \u00e9\u00e9' }), 401, 'INVALID_TOKEN');
    expectError(await c.request('GET', '/session', { authorization: 'Basic abc' }), 401, 'UNAUTHORIZED');
    expectError(await c.request('POST', '/search', { authorization: `Bearer i2.${secret}`, body: { queryVector: [1] } }), 401, 'INVALID_TOKEN');
    // Headers: up to 12 KB pass to the instance; over 16 KiB get the 431 the instance would send.
    expectOk(await c.request('GET', '/session', { token: tokens[0], headers: { 'x-pad': 'a'.repeat(12_000) } }));
    const tooLarge = await c.request('GET', '/session', { token: tokens[0], headers: { 'x-pad': 'a'.repeat(20_000) } });
    expect([tooLarge.status, tooLarge.text]).to.deep.equal([431, '']);
  });

  it('refuses a body over MAX_BODY_BYTES with PAYLOAD_TOO_LARGE JSON, sent whole or chunked', async () => {
    const token = tokens[1];
    const big = JSON.stringify({ ids: ['x'.repeat(MAX_BODY_BYTES)] });
    expectError(await c.request('POST', '/vectors/get-many', { token, body: big }), 413, 'PAYLOAD_TOO_LARGE');
    const stream = new ReadableStream({
      start(controller) {
        controller.enqueue(new TextEncoder().encode(big));
        controller.close();
      },
    });
    const res = await fetch(`${c.cluster.url}/vectors/get-many`, {
      method: 'POST',
      body: stream,
      duplex: 'half',
      headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    } as RequestInit);
    const text = await res.text();
    expectError({ status: res.status, headers: res.headers, text, body: JSON.parse(text) }, 413, 'PAYLOAD_TOO_LARGE');
    // Just under the limit is the instance's to judge (nginx buffers it in a temporary file first).
    const fits = JSON.stringify({ ids: ['x'.repeat(200)] }).padEnd(MAX_BODY_BYTES - 10, ' ');
    expectOk(await c.request('POST', '/vectors/get-many', { token, body: fits }));
    const rows = randomVectors(seededRng(5), 250, 384).map((vector, i) => ({ id: `big${i}`, vector }));
    const body = JSON.stringify({ vectors: rows });
    expect(body.length).to.be.within(1.5 * 1024 * 1024, MAX_BODY_BYTES);
    const fresh = await c.token();
    expect(expectOk(await c.request('POST', '/vectors/add-many', { token: fresh, body })).mutation).to.deep.equal({ added: 250, replaced: 0 });
  });

  it('takes an import over MAX_BODY_BYTES up to MAX_IMPORT_BYTES, then 413 JSON', async () => {
    const source = await c.token();
    const rows = randomVectors(seededRng(7), 2400, 384);
    for (let i = 0; i < rows.length; i += 400) {
      const vectors = rows.slice(i, i + 400).map((vector, j) => ({ id: `r${i + j}`, vector: encodeFloat32Base64(vector) }));
      expectOk(await c.request('POST', '/vectors/add-many', { token: source, body: { vectors } }));
    }
    const exported = await c.request('GET', '/vectors/export?vectorEncoding=base64', { token: source });
    expect(exported.text.length).to.be.within(MAX_BODY_BYTES, MAX_IMPORT_BYTES);
    const ndjson = { 'content-type': 'application/x-ndjson' };
    const target = await c.token();
    expect(expectOk(await c.request('POST', '/vectors/import', { token: target, body: exported.text, headers: ndjson })).mutation).to.deep.equal({
      added: 2400,
      replaced: 0,
    });
    const tooLarge = await c.request('POST', '/vectors/import', { token: target, body: exported.text.padEnd(MAX_IMPORT_BYTES + 1, ' '), headers: ndjson });
    expect(expectError(tooLarge, 413, 'PAYLOAD_TOO_LARGE').message).to.include('MAX_IMPORT_BYTES');
  });

  it('SIGKILL of one instance: only its sessions get 503 INSTANCE_UNAVAILABLE; restarted, they answer with their data', async () => {
    const rng = seededRng(99);
    const byInstance = new Map<string, { token: string; rows: { id: string; vector: number[]; seq: number }[] }>();
    while (byInstance.size < 3) {
      const token = await c.token();
      if (byInstance.has(idOf(token))) continue;
      const rows = randomVectors(rng, 30, 6).map((vector, seq) => ({ id: `r${seq}`, vector, seq }));
      expectOk(await c.request('POST', '/vectors/add-many', { token, body: { vectors: rows.map(({ id, vector }) => ({ id, vector })), metric: 'l2' } }));
      byInstance.set(idOf(token), { token, rows });
    }
    const search = async ({ token, rows }: { token: string; rows: { id: string; vector: number[]; seq: number }[] }) => {
      const query = randomVectors(rng, 1, 6)[0];
      const res = await c.request('POST', '/search', { token, body: { queryVector: query, topK: 5 } });
      expectSameTopK('l2', expectOk(res).results, query, rows, 5);
    };

    await c.cluster.kill('i2');
    const down = await c.request('POST', '/search', { token: byInstance.get('i2')!.token, body: { queryVector: [1, 2, 3, 4, 5, 6] } });
    expectError(down, 503, 'INSTANCE_UNAVAILABLE');
    expect(down.headers.get('content-type')).to.match(/^application\/json/);
    expect(down.headers.get('retry-after')).to.match(/^[1-9]/);
    for (const id of ['i1', 'i3']) await search(byInstance.get(id)!);
    // New sessions go to the instances that answer.
    for (let i = 0; i < 6; i++) expect(idOf(await c.token())).to.be.oneOf(['i1', 'i3']);

    await c.cluster.restart('i2');
    for (const entry of byInstance.values()) await search(entry);
    const res = await c.request('POST', '/vectors/get', { token: byInstance.get('i2')!.token, body: { id: 'r7' } });
    expect(expectOk(res).vector.vector.map(Math.fround)).to.deep.equal(Array.from(Float32Array.from(byInstance.get('i2')!.rows[7].vector)));
  });
});
