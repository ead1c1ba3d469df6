// The server with EMBEDDING_URL: an OpenAI-compatible endpoint (a real HTTP
// server on 127.0.0.1) embeds /embed's texts, records stored by their text
// and text queries, under EMBEDDING_MODEL's name, which locks the session like
// the builtin model's; /limits names it and never the key; the endpoint's
// failures are answered 502/503 with their codes, and nothing is stored.
import { expect } from 'chai';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigError, loadConfig } from '../../src/config.js';
import { rawVector, unit, useEmbeddingEndpoint } from '../helpers/embedding-endpoint.js';
import { expectError, expectOk, useServer } from '../helpers/http.js';
import { parseExposition } from '../helpers/prometheus.js';
import { startApp } from '../helpers/live-app.js';

const MODEL = 'nomic-embed-text';
const KEY = 'sk-never-shown-0123456789';

describe('an OpenAI-compatible embedding endpoint (EMBEDDING_URL)', () => {
  const endpoint = useEmbeddingEndpoint();
  // The endpoint's URL is known once it listens: the server's config reads this object when it starts, after.
  const overrides = {
    embeddingModel: MODEL,
    embeddingApiKey: KEY,
    embeddingDimensions: 4,
    embeddingTimeoutMs: 300,
    embeddingAttempts: 2,
    embeddingBatchTexts: 3,
    embeddingUrl: '',
  };
  before(() => {
    overrides.embeddingUrl = endpoint.url;
  });
  const api = useServer(overrides);

  it('POST /embed answers the endpoint model, its dimension and its vectors normalised, sent in batches with the key', async () => {
    const token = await api.token();
    const texts = ['one', 'two two', 'three', 'four', 'five'];
    const body = expectOk(await api.post('/embed', { token, body: { texts } }));
    expect([body.model, body.dimensions]).to.deep.equal([MODEL, 4]);
    expect(body.vectors).to.deep.equal(texts.map((t) => unit(rawVector(t))));
    expect(endpoint.seen.map((s) => s.body.input)).to.deep.equal([texts.slice(0, 3), texts.slice(3)]);
    expect(endpoint.seen.every((s) => s.body.model === MODEL && s.authorization === `Bearer ${KEY}`)).to.equal(true);
  });

  it('stores records by their text and searches by text under the model, which the session is locked to', async () => {
    const token = await api.token();
    const docs = ['apples and pears', 'zebra crossing', 'quiet night'].map((text, i) => ({ id: `d${i}`, text }));
    expectOk(await api.post('/vectors/add-many', { token, body: { vectors: docs } }));
    const { session } = expectOk(await api.get('/session', { token }));
    expect(session.config).to.include({ embedding: MODEL, dimensions: 4, metric: 'cosine' });
    const stored = expectOk(await api.post('/vectors/get-many', { token, body: { ids: ['d1'] } }));
    // Stored vectors are written as the shortest decimals of their float32 values.
    expect(stored.vectors[0].vector.map(Math.fround)).to.deep.equal(unit(rawVector('zebra crossing')));
    const hits = expectOk(await api.post('/search', { token, body: { queryVector: { text: 'zebra crossing' }, topK: 1 } })).results;
    expect(hits[0].id).to.equal('d1');
    const locked = expectError(
      await api.post('/vectors/add', { token, body: { id: 'x', vector: [1, 0, 0, 0], embedding: 'use-lite-512' } }),
      409,
      'EMBEDDING_LOCKED',
    );
    expect(locked.message).to.include(MODEL);
    expectOk(await api.post('/vectors/add', { token, body: { id: 'named', text: 'more', embedding: MODEL } }));
    // Export and import carry the model: the copy searches by text as the first.
    const exported = await api.get('/vectors/export', { token });
    expect(JSON.parse(exported.text.split('\n')[0])).to.include({ embedding: MODEL, dimensions: 4 });
    const copy = await api.token();
    expectOk(await api.post('/vectors/import', { token: copy, body: exported.text, headers: { 'content-type': 'application/x-ndjson' } }));
    const query = { queryVector: { text: 'apples' }, topK: 4 };
    expect(expectOk(await api.post('/search', { token: copy, body: query })).results).to.deep.equal(
      expectOk(await api.post('/search', { token, body: query })).results,
    );
  });

  it('/limits names the endpoint model and its bounds, and carries neither the key nor the URL', async () => {
    const res = await api.get('/limits');
    const { embedding } = expectOk(res).limits;
    expect(embedding.models).to.deep.equal([{ name: MODEL, dimensions: 4, metric: 'cosine' }]);
    expect(embedding.endpoint).to.deep.equal({ timeoutMs: 300, attempts: 2, batchTexts: 3 });
    expect(res.text).not.to.include(KEY);
    expect(res.text).not.to.include(endpoint.url);
  });

  it('answers a bad answer 502 EMBEDDING_UPSTREAM_ERROR and stores nothing', async () => {
    const token = await api.token();
    endpoint.behave = (s, res) => res.writeHead(200).end(JSON.stringify({ data: s.body.input.map((_t, index) => ({ index, embedding: [1, 2, 3] })) }));
    const error = expectError(await api.post('/vectors/add', { token, body: { id: 'a', text: 'hello' } }), 502, 'EMBEDDING_UPSTREAM_ERROR');
    expect(error.message).to.include('has 3 numbers');
    expect(JSON.stringify(error)).not.to.include(KEY);
    expect(expectOk(await api.get('/session', { token })).session.vectorCount).to.equal(0);
  });

  it('answers 5xx after the retries and a timeout 503 EMBEDDING_UNAVAILABLE with Retry-After', async () => {
    const token = await api.token();
    endpoint.behave = (_s, res) => res.writeHead(502).end();
    const failed = await api.post('/embed', { token, body: { texts: ['x'] } });
    expectError(failed, 503, 'EMBEDDING_UNAVAILABLE');
    expect(failed.headers.get('retry-after')).to.match(/^\d+$/);
    expect(endpoint.seen).to.have.length(2);
    endpoint.behave = () => {};
    const started = performance.now();
    const slow = await api.post('/search', { token, body: { queryVector: { text: 'x' } } });
    // A session with no model yet refuses the text query before it is embedded.
    expectError(slow, 400, 'NO_EMBEDDING_MODEL');
    const timedOut = await api.post('/embed', { token, body: { texts: ['x'] } });
    expectError(timedOut, 503, 'EMBEDDING_UNAVAILABLE');
    expect(performance.now() - started).to.be.below(2000);
  });

  it('answers a 429 that persists 503 with Retry-After, and a 401 from the endpoint 502', async () => {
    const token = await api.token();
    endpoint.behave = (_s, res) => res.writeHead(429, { 'retry-after': '0' }).end();
    expectError(await api.post('/embed', { token, body: { texts: ['x'] } }), 503, 'EMBEDDING_UNAVAILABLE');
    endpoint.behave = (_s, res) => res.writeHead(401).end(`{"error":{"message":"bad key ${KEY}"}}`);
    // Nothing the server writes to its console carries the key either.
    const written: unknown[] = [];
    const saved = { log: console.log, error: console.error, warn: console.warn };
    console.log = console.error = console.warn = (...args: unknown[]) => void written.push(args);
    let reply: Awaited<ReturnType<typeof api.post>>;
    try {
      reply = await api.post('/embed', { token, body: { texts: ['x'] } });
    } finally {
      Object.assign(console, saved);
    }
    const error = expectError(reply, 502, 'EMBEDDING_UPSTREAM_ERROR');
    expect(error.details).to.include({ upstreamStatus: 401, model: MODEL });
    expect(reply.text + JSON.stringify(written)).not.to.include(KEY);
  });

  it('/metrics counts the requests sent to the endpoint, retries included, and the batches that failed', async () => {
    const read = async () => parseExposition((await api.get('/metrics')).text).samples;
    const before = await read();
    const token = await api.token();
    endpoint.behave = (_s, res) => res.writeHead(500).end();
    expectError(await api.post('/embed', { token, body: { texts: ['x'] } }), 503, 'EMBEDDING_UNAVAILABLE');
    const after = await read();
    expect(after.get('tempvec_embedding_endpoint_requests_total')! - before.get('tempvec_embedding_endpoint_requests_total')!).to.equal(2);
    expect(after.get('tempvec_embedding_endpoint_failures_total')! - before.get('tempvec_embedding_endpoint_failures_total')!).to.equal(1);
    expect(after.get('tempvec_embedding_endpoint_texts_in_flight')).to.equal(0);
    expect(after.get('tempvec_embedding_threads')).to.equal(0);
  });

  it('a session of the builtin model (an import, a restart) refuses text here with 400 NO_EMBEDDING_MODEL naming its model', async () => {
    const token = await api.token();
    const vector = Array.from({ length: 512 }, (_v, i) => (i === 0 ? 1 : 0));
    expectOk(await api.post('/vectors/add', { token, body: { id: 'a', vector, embedding: 'use-lite-512' } }));
    const error = expectError(await api.post('/search', { token, body: { queryVector: { text: 'x' } } }), 400, 'NO_EMBEDDING_MODEL');
    expect(error.message).to.include('embedded by use-lite-512');
    expectError(await api.post('/vectors/add', { token, body: { id: 'b', text: 'x' } }), 400, 'NO_EMBEDDING_MODEL');
    expect(endpoint.seen).to.have.length(0);
  });

  it('with DATA_DIR, a restart with the same EMBEDDING_MODEL reopens its sessions under it, searchable by text', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tempvec-endpoint-'));
    const config = { ...overrides, dataDir: dir, embeddingThreads: 1 };
    try {
      let live = await startApp(config);
      const token = await live.newToken();
      const docs = ['apples and pears', 'zebra crossing'].map((text, i) => ({ id: `d${i}`, text }));
      expect((await live.send('POST', '/vectors/add-many', { token, body: { vectors: docs } })).status).to.equal(200);
      const query = { queryVector: { text: 'zebra' } };
      const before = (await live.send('POST', '/search', { token, body: query })).body.results;
      await live.close();
      live = await startApp(config);
      const after = await live.send('POST', '/search', { token, body: query });
      await live.close();
      expect(after.body.session.config.embedding).to.equal(MODEL);
      expect(after.body.results).to.deep.equal(before);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('with DATA_DIR, a restart with another EMBEDDING_MODEL keeps the rows and refuses text: the session is not relabelled', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tempvec-endpoint-'));
    const config = { ...overrides, dataDir: dir, embeddingThreads: 1 };
    try {
      let live = await startApp(config);
      const token = await live.newToken();
      expect((await live.send('POST', '/vectors/add', { token, body: { id: 'd0', text: 'zebra crossing' } })).status).to.equal(200);
      await live.close();
      live = await startApp({ ...config, embeddingModel: 'another-model' });
      const byText = await live.send('POST', '/search', { token, body: { queryVector: { text: 'zebra' } } });
      const byVector = await live.send('POST', '/search', { token, body: { queryVector: unit(rawVector('zebra crossing')), topK: 1 } });
      await live.close();
      expect([byText.status, byText.body.error?.code]).to.deep.equal([400, 'NO_EMBEDDING_MODEL']);
      expect(byVector.body.results.map((hit: { id: string }) => hit.id)).to.deep.equal(['d0']);
      expect(byVector.body.session.config.embedding).to.not.equal('another-model');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('refuses a configuration it cannot run: no model, no dimension, a URL with credentials, too many attempts', () => {
    const env = { EMBEDDING_URL: 'http://127.0.0.1:1/v1/embeddings', EMBEDDING_MODEL: 'm', EMBEDDING_DIMENSIONS: '8' };
    expect(loadConfig(env).embeddingModel).to.equal('m');
    for (const bad of [
      { EMBEDDING_MODEL: '' },
      { EMBEDDING_MODEL: 'use-lite-512' },
      { EMBEDDING_DIMENSIONS: '0' },
      { EMBEDDING_DIMENSIONS: '1025' },
      { EMBEDDING_URL: 'http://user:pw@127.0.0.1/v1/embeddings' },
      { EMBEDDING_URL: 'ftp://127.0.0.1/' },
      { EMBEDDING_ATTEMPTS: '11' },
    ]) {
      expect(() => loadConfig({ ...env, ...bad }), JSON.stringify(bad)).to.throw(ConfigError);
    }
  });
});
