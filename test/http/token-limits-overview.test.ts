// The unauthenticated routes: POST /token, GET /limits, GET /, GET /sdk.js.
import { expect } from 'chai';
import { CONFIG_VARIABLES, publicLimits } from '../../src/config.js';
import { expectOk, useServer } from '../helpers/http.js';
import { expectSessionShape } from './fixtures.js';

describe('POST /token', () => {
  const api = useServer();

  it('answers 201 with a bearer token and a new, empty session', async () => {
    const res = await api.post('/token');
    const body = expectOk(res, 201);
    expect(body.token).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(body.tokenType).to.equal('Bearer');
    expectSessionShape(body.session);
    expect(body.session).to.deep.include({ initialized: false, vectorCount: 0, maxVectors: api.config.maxVectorsPerSession });
    expect(body.session.config).to.deep.equal({
      dimensions: null,
      metric: null,
      vectorType: 'float32',
      backend: 'wasm-simd128',
      analyzer: null,
      embedding: null,
    });
    expect(body.session.sessionId).to.not.equal(body.token);
    expect(body.session.ttlMsRemaining).to.equal(api.config.sessionTtlMs);
    expect(res.headers.get('cache-control')).to.equal('no-store');
  });

  it('issues a different token and session each time', async () => {
    const a = expectOk(await api.post('/token'), 201);
    const b = expectOk(await api.post('/token'), 201);
    expect(a.token).to.not.equal(b.token);
    expect(a.session.sessionId).to.not.equal(b.session.sessionId);
  });

  it('needs no body and no credentials', async () => {
    expectOk(await api.post('/token', { headers: { authorization: 'Bearer garbage' } }), 201);
  });
});

describe('GET /limits', () => {
  const overrides = {
    sessionTtlMs: 123_000,
    maxVectorsPerSession: 77,
    maxSessions: 5,
    maxAddManyBatch: 11,
    maxGetManyBatch: 12,
    maxDeleteManyBatch: 13,
    maxSearchManyBatch: 14,
    maxIdLength: 15,
    maxMetadataBytes: 160,
    maxBodyBytes: 170_000,
    persistenceJobs: 3,
    lockStaleMs: 6000,
  };
  const api = useServer(overrides);

  it('publishes every configured limit, the TTL included, as the service applies them', async () => {
    const { limits, usage } = expectOk(await api.get('/limits'));
    expect(limits).to.deep.equal(publicLimits(api.config));
    expect(limits).to.deep.include({
      maxDimensions: 1024,
      maxVectorsPerSession: 77,
      maxSessions: 5,
      sessionTtlMs: 123_000,
      maxIdLength: 15,
      maxMetadataBytes: 160,
      maxBodyBytes: 170_000,
      backend: 'wasm-simd128',
    });
    expect(limits.batch).to.deep.equal({ addMany: 11, getMany: 12, deleteMany: 13, searchMany: 14 });
    expect(limits.topK).to.deep.equal({ min: 1, max: 100, default: 10 });
    expect(limits.candidatePool).to.deep.equal({ min: 1, max: 2048, default: 100 });
    expect(limits.metrics).to.deep.equal(['cosine', 'l2']);
    expect(limits.defaultMetric).to.equal('cosine');
    expect(limits.persistence).to.deep.equal({
      jobs: 3,
      bufferBytesPerJob: 8 * 1024 * 1024,
      dataDirMaxBytes: 0,
      maxSessionLogBytes: 1024 * 1024 * 1024,
      lockStaleMs: 6000,
      lockHeartbeatMs: 2000,
    });
    expect(usage).to.include.keys('activeSessions', 'maxSessions', 'linearMemoryBytes');
  });

  it('counts live sessions in usage', async () => {
    const before = expectOk(await api.get('/limits')).usage.activeSessions;
    await api.token();
    expect(expectOk(await api.get('/limits')).usage.activeSessions).to.equal(before + 1);
  });

  it('publishes the defaults of the configuration table without overrides', () => {
    const defaults = Object.fromEntries(CONFIG_VARIABLES.map(([, key, fallback]) => [key, fallback]));
    expect(defaults).to.deep.include({
      port: 3000,
      host: '127.0.0.1',
      sessionTtlMs: 1_800_000,
      maxVectorsPerSession: 50_000,
      maxSessions: 10_000,
      maxAddManyBatch: 1000,
      maxGetManyBatch: 1000,
      maxDeleteManyBatch: 1000,
      maxSearchManyBatch: 64,
      maxIdLength: 256,
      maxMetadataBytes: 8192,
      maxBodyBytes: 32 * 1024 * 1024,
    });
  });
});

describe('GET /', () => {
  const api = useServer();

  it('answers the overview: name, version, links and every route of the spec', async () => {
    const body = expectOk(await api.get('/'));
    expect(body.name).to.equal('tempvec');
    expect(body.version).to.match(/^\d+\.\d+\.\d+/);
    expect(body.links).to.include({ limits: '/limits', sdk: '/sdk.js', token: '/token' });
    const routes = body.routes.map((r: { method: string; path: string }) => `${r.method} ${r.path}`);
    expect(routes).to.include.members([
      'GET /',
      'GET /sdk.js',
      'GET /limits',
      'POST /token',
      'GET /session',
      'POST /index/reset',
      'POST /vectors/has',
      'POST /vectors/get',
      'POST /vectors/get-many',
      'POST /vectors/metadata/get',
      'POST /vectors/metadata/set',
      'POST /vectors/metadata/delete',
      'POST /vectors/add',
      'POST /vectors/add-many',
      'POST /vectors/delete',
      'POST /vectors/delete-many',
      'POST /vectors/clear',
      'POST /search',
      'POST /search-many',
    ]);
  });
});

describe('GET /sdk.js', () => {
  const api = useServer();

  it('serves a JavaScript module, revalidated by ETag', async () => {
    const res = await api.get('/sdk.js');
    expect(res.status).to.equal(200);
    expect(res.headers.get('content-type')).to.match(/^text\/javascript/);
    expect(res.text).to.match(/\bexport\b/);
    const etag = res.headers.get('etag')!;
    expect(etag).to.be.a('string');
    // What a browser sends to revalidate a no-cache resource (fetch() itself would add no-cache, which forbids a 304).
    const again = await api.get('/sdk.js', { headers: { 'if-none-match': etag, 'cache-control': 'max-age=0' } });
    expect(again.status).to.equal(304);
  });
});
