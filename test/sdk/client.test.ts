// The SDK as served (GET /sdk.js, imported into Node from the bytes the server
// sends) against a live server: one method per route, the token fetched once
// and kept, typed errors with the server's code, and SESSION_EXPIRED reported
// instead of silently starting an empty session.
import { expect } from 'chai';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { startApp, type LiveApp } from '../helpers/live-app.js';

type Sdk = typeof import('../../src/sdk/index.js');

/** Fetch /sdk.js from the server and import exactly those bytes. */
async function importServedSdk(live: LiveApp): Promise<Sdk> {
  const res = await fetch(`${live.url}/sdk.js`);
  const dir = mkdtempSync(join(tmpdir(), 'tempvec-sdk-'));
  try {
    const file = join(dir, 'sdk.mjs');
    writeFileSync(file, await res.text());
    return await import(pathToFileURL(file).href);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('SDK client (GET /sdk.js in Node)', () => {
  const ttl = 60_000;
  let now = Date.now();
  let live: LiveApp;
  let sdk: Sdk;

  before(async () => {
    live = await startApp({ sessionTtlMs: ttl, tokenRatePerMin: 0 }, { now: () => now });
    sdk = await importServedSdk(live);
  });
  after(() => live.close());

  it('is served as JavaScript with an ETag, and its bundle imports nothing from Node', async () => {
    const res = await fetch(`${live.url}/sdk.js`);
    expect(res.headers.get('content-type')).to.match(/^text\/javascript/);
    expect(res.headers.get('etag')).to.match(/^"[\w-]+"$/);
    const source = await res.text();
    expect(source).to.not.match(/from\s*["']node:|\brequire\(/);
    const types = await fetch(`${live.url}/sdk.d.ts`);
    expect(await types.text()).to.include('export declare class TempvecClient');
  });

  it('has a method for every route of the OpenAPI document but static files and operator routes', async () => {
    const doc = (await live.send('GET', '/openapi.json')).body;
    const files = new Set([
      'overview',
      'openapi',
      'sdk',
      'sdkTypes',
      'kernel',
      'kernelSimd128',
      'modelManifest',
      'modelFile',
      'demoPassages',
      'health',
      'ready',
      'metrics',
    ]);
    const ids = Object.values<any>(doc.paths)
      .flatMap((ops) => Object.values<any>(ops).map((op) => op.operationId))
      .filter((id) => !files.has(id));
    expect(ids).to.have.length(25);
    for (const id of ids) expect(typeof (sdk.TempvecClient.prototype as any)[id], id).to.equal('function');
  });

  it('runs the add, search, read, metadata and delete cycle, with Float32Array inputs', async () => {
    const client = new sdk.TempvecClient({ baseUrl: live.url });
    const added = await client.addMany(
      [
        { id: 'a', vector: new Float32Array([1, 0, 0]), metadata: { color: 'red' } },
        { id: 'b', vector: [0, 1, 0], metadata: { color: 'blue' } },
        { id: 'c', vector: new Float32Array([0.6, 0.8, 0]), metadata: { color: 'red' } },
      ],
      { metric: 'cosine' },
    );
    expect(added.mutation).to.deep.equal({ added: 3, replaced: 0 });
    expect(client.token).to.be.a('string');
    expect(added.session.config).to.include({ dimensions: 3, metric: 'cosine' });

    const found = await client.search(new Float32Array([1, 0.1, 0]), { topK: 2, filter: { color: 'red' }, includeMetadata: true });
    expect(found.results.map((h) => h.id)).to.deep.equal(['a', 'c']);
    expect(found.results[0].metadata).to.deep.equal({ color: 'red' });
    expect(found.metrics).to.have.property('searchMs');
    const many = await client.searchMany([[0, 1, 0], new Float32Array([1, 0, 0])], { topK: 1 });
    expect(many.results.map((list) => list[0].id)).to.deep.equal(['b', 'a']);

    expect((await client.has('a')).has).to.equal(true);
    expect((await client.get('c')).vector.vector).to.deep.equal([0.6, 0.8, 0]);
    expect((await client.getMany(['a', 'zz'])).notFound).to.deep.equal(['zz']);
    await client.setMetadata('a', { color: 'green' });
    expect((await client.getMetadata('a')).metadata).to.deep.equal({ color: 'green' });
    expect((await client.deleteMetadata('a')).metadata).to.deep.equal({});
    await client.add({ id: 'd', vector: [0, 0, 1] });
    expect((await client.delete('d')).mutation).to.deep.equal({ deleted: 1, notFound: [] });
    expect((await client.deleteMany(['b', 'zz'])).mutation).to.deep.equal({ deleted: 1, notFound: ['zz'] });
    expect((await client.getSession()).session.vectorCount).to.equal(2);
    expect((await client.clear()).mutation.deleted).to.equal(2);
    expect((await client.resetIndex()).session.initialized).to.equal(false);
    expect((await client.limits()).limits.topK.max).to.equal(100);
  });

  it('sends a Float32Array as base64 of its float32 bytes and a plain array as JSON numbers', async () => {
    const sent: any[] = [];
    const spy: typeof fetch = (url, init) => {
      if (init?.body) sent.push(JSON.parse(String(init.body)));
      return fetch(url, init);
    };
    const client = new sdk.TempvecClient({ baseUrl: live.url, fetch: spy });
    const exact = new Float32Array([0.1, -2.5e-8, 1e15]);
    await client.add({ id: 'f', vector: exact });
    await client.add({ id: 'n', vector: [0.1, 0.2, 0.3] });
    await client.searchMany([exact, [1, 1, 1]]);
    expect(sent[0].vector).to.equal(Buffer.from(exact.buffer).toString('base64'));
    expect(sent[1].vector).to.deep.equal([0.1, 0.2, 0.3]);
    expect(sent[2].queryVectors[0]).to.be.a('string');
    expect(sent[2].queryVectors[1]).to.deep.equal([1, 1, 1]);
    const stored = (await client.get('f')).vector.vector;
    expect(Float32Array.from(stored)).to.deep.equal(exact);
  });

  it('gets one token for calls that start together', async () => {
    const before = live.store.size;
    const client = new sdk.TempvecClient({ baseUrl: live.url });
    await Promise.all([client.getSession(), client.has('x'), client.getSession()]);
    expect(live.store.size).to.equal(before + 1);
  });

  it("raises TempvecError with the server's code, status and details", async () => {
    const client = new sdk.TempvecClient({ baseUrl: live.url });
    await client.add({ id: 'a', vector: [1, 2, 3] });
    const err = await client.add({ id: 'b', vector: [1, 2] }).catch((e) => e);
    expect(err).to.be.instanceOf(sdk.TempvecError);
    expect(err).to.include({ status: 400, code: 'DIMENSION_MISMATCH' });
    expect(err.details).to.include({ expected: 3, actual: 2 });
    const missing = await client.get('nope').catch((e) => e);
    expect(missing).to.include({ status: 404, code: 'VECTOR_NOT_FOUND' });
  });

  it('on SESSION_EXPIRED tells the caller once and keeps failing until a new token is asked for', async () => {
    const told: unknown[] = [];
    const client = new sdk.TempvecClient({ baseUrl: live.url, onSessionExpired: (e) => told.push(e) });
    await client.add({ id: 'a', vector: [1, 0, 0] });
    const token = client.token;
    now += ttl + 1;

    const first = await client.search([1, 0, 0]).catch((e) => e);
    expect(first).to.be.instanceOf(sdk.SessionExpiredError);
    expect(first).to.be.instanceOf(sdk.TempvecError);
    expect(first.code).to.equal('SESSION_EXPIRED');
    const second = await client.getSession().catch((e) => e);
    expect(second).to.equal(first);
    expect(told).to.deep.equal([first]);
    expect(client.token).to.equal(token);

    await client.createToken();
    expect(client.token).to.not.equal(token);
    expect((await client.getSession()).session.vectorCount).to.equal(0);
  });
});
