// GET /session, POST /index/reset, POST /vectors/clear and the state machine of spec section 3.
import { expect } from 'chai';
import { publicLimits } from '../../src/config.js';
import { ManualClock } from '../helpers/clock.js';
import { expectError, expectOk, useServer } from '../helpers/http.js';
import { expectSessionShape, sessionOf } from './fixtures.js';

describe('GET /session', () => {
  const clock = new ManualClock();
  const api = useServer({ maxVectorsPerSession: 100, sessionTtlMs: 60_000 }, clock.now);

  it('answers every session field, stats, usage and limits', async () => {
    const token = await api.token();
    const created = new Date(clock.time).toISOString();
    clock.advance(1500);
    const body = expectOk(await api.get('/session', { token }));
    expectSessionShape(body.session);
    expect(body.session).to.deep.include({
      createdAt: created,
      updatedAt: created,
      lastAccessedAt: new Date(clock.time).toISOString(),
      expiresAt: new Date(clock.time + 60_000).toISOString(),
      ttlMsRemaining: 60_000,
      initialized: false,
      vectorCount: 0,
      maxVectors: 100,
    });
    expect(body.stats).to.deep.equal({
      vectorCount: 0,
      dimensions: null,
      metric: null,
      vectorType: 'float32',
      vectorBytes: 0,
      codeBytes: 0,
      rowCapacity: 0,
      linearMemoryBytes: 0,
      linearMemoryUsedBytes: 0,
      heapBytes: 0,
      metadataBytes: 0,
      metadataJsonBytes: 0,
      filterIndexEntries: 0,
      textBytes: 0,
      textIndexBytes: 0,
      textIndexTerms: 0,
    });
    expect(body.serverMemory).to.include({ memoryBudgetBytes: api.config.memoryBudgetBytes, linearMemoryBytes: 0 });
    expect(body.serverMemory.heapBytes).to.be.greaterThan(0);
    expect(body.usage).to.deep.equal({ vectorCount: 0, maxVectors: 100, vectorsRemaining: 100, fractionUsed: 0 });
    expect(body.limits).to.deep.equal(publicLimits(api.config));
  });

  it('reports what an initialized session holds', async () => {
    const token = await api.token();
    expectOk(
      await api.post('/vectors/add-many', {
        token,
        body: {
          vectors: [
            { id: 'a', vector: [1, 2, 3, 4] },
            { id: 'b', vector: [4, 3, 2, 1] },
          ],
          metric: 'l2',
        },
      }),
    );
    clock.advance(10);
    const body = expectOk(await api.get('/session', { token }));
    expect(body.session).to.deep.include({ initialized: true, vectorCount: 2 });
    expect(body.session.config).to.deep.include({ dimensions: 4, metric: 'l2' });
    expect(body.stats).to.deep.include({ vectorCount: 2, dimensions: 4, metric: 'l2', vectorType: 'float32', vectorBytes: 32, codeBytes: 0 });
    expect(body.stats.rowCapacity).to.be.at.least(2);
    expect(body.stats.linearMemoryBytes).to.be.at.least(body.stats.linearMemoryUsedBytes).and.above(0);
    expect(body.usage).to.deep.equal({ vectorCount: 2, maxVectors: 100, vectorsRemaining: 98, fractionUsed: 0.02 });
    expect(Date.parse(body.session.updatedAt)).to.equal(clock.time - 10);
  });
});

describe('session state transitions (spec section 3)', () => {
  const api = useServer();

  it('(none) -> new: POST /token creates an uninitialized session with an empty index', async () => {
    const token = await api.token();
    const session = await sessionOf(api, token);
    expect(session).to.deep.include({ initialized: false, vectorCount: 0 });
    expect(session.config).to.deep.include({ dimensions: null, metric: null });
  });

  it('new -> initialized by add: dimension from the vector, cosine by default', async () => {
    const token = await api.token();
    const body = expectOk(await api.post('/vectors/add', { token, body: { id: 'a', vector: [1, 2, 3] } }));
    expect(body.session).to.deep.include({ initialized: true, vectorCount: 1 });
    expect(body.session.config).to.deep.include({ dimensions: 3, metric: 'cosine' });
  });

  it('new -> initialized by /vectors/add-many with dimensions and metric given', async () => {
    const token = await api.token();
    const body = expectOk(
      await api.post('/vectors/add-many', {
        token,
        body: {
          dimensions: 2,
          metric: 'l2',
          vectors: [
            { id: 'a', vector: [0, 0] },
            { id: 'b', vector: [1, 1] },
          ],
        },
      }),
    );
    expect(body.session.config).to.deep.include({ dimensions: 2, metric: 'l2' });
  });

  it('new stays new when the first add fails', async () => {
    const token = await api.token();
    expectError(await api.post('/vectors/add', { token, body: { id: 'a', vector: [1, 2], dimensions: 3 } }), 400, 'DIMENSION_MISMATCH');
    expectError(await api.post('/vectors/add', { token, body: { id: 'a', vector: [0, 0] } }), 400, 'ZERO_VECTOR');
    const session = await sessionOf(api, token);
    expect(session).to.deep.include({ initialized: false, vectorCount: 0 });
    // ...so a different dimension and metric are still possible.
    const ok = expectOk(await api.post('/vectors/add', { token, body: { id: 'a', vector: [0, 0, 0, 0, 0], metric: 'l2' } }));
    expect(ok.session.config).to.deep.include({ dimensions: 5, metric: 'l2' });
  });

  it('initialized -> initialized: adds add or replace; metric and dimension locked', async () => {
    const token = await api.token();
    expectOk(await api.post('/vectors/add', { token, body: { id: 'a', vector: [1, 2] } }));
    const added = expectOk(await api.post('/vectors/add', { token, body: { id: 'b', vector: [2, 1], metric: 'cosine', dimensions: 2 } }));
    expect(added.mutation).to.deep.equal({ added: 1, replaced: 0 });
    const replaced = expectOk(await api.post('/vectors/add', { token, body: { id: 'a', vector: [3, 3] } }));
    expect(replaced.mutation).to.deep.equal({ added: 0, replaced: 1 });
    expectError(await api.post('/vectors/add', { token, body: { id: 'c', vector: [1, 2], metric: 'l2' } }), 409, 'METRIC_LOCKED');
    expectError(await api.post('/vectors/add', { token, body: { id: 'c', vector: [1, 2, 3] } }), 400, 'DIMENSION_MISMATCH');
    const session = await sessionOf(api, token);
    expect(session.vectorCount).to.equal(2);
    expect(session.config).to.deep.include({ dimensions: 2, metric: 'cosine' });
  });

  it('initialized -> initialized by clear: no vectors, same session and config', async () => {
    const token = await api.token();
    const before = expectOk(
      await api.post('/vectors/add-many', {
        token,
        body: {
          metric: 'l2',
          vectors: [
            { id: 'a', vector: [1, 2] },
            { id: 'b', vector: [2, 1] },
          ],
        },
      }),
    );
    const cleared = expectOk(await api.post('/vectors/clear', { token }));
    expect(cleared.mutation).to.deep.equal({ deleted: 2 });
    expect(cleared.session).to.deep.include({ sessionId: before.session.sessionId, initialized: true, vectorCount: 0 });
    expect(cleared.session.config).to.deep.include({ dimensions: 2, metric: 'l2' });
    expect(expectOk(await api.post('/vectors/has', { token, body: { id: 'a' } })).has).to.equal(false);
    expectError(await api.post('/vectors/add', { token, body: { id: 'a', vector: [1, 2, 3] } }), 400, 'DIMENSION_MISMATCH');
    expectError(await api.post('/vectors/add', { token, body: { id: 'a', vector: [1, 2], metric: 'cosine' } }), 409, 'METRIC_LOCKED');
    expectError(await api.post('/search', { token, body: { queryVector: [1, 2, 3] } }), 400, 'DIMENSION_MISMATCH');
  });

  it('initialized -> new by /index/reset: config gone, the same token works', async () => {
    const token = await api.token();
    const before = expectOk(await api.post('/vectors/add', { token, body: { id: 'a', vector: [1, 2], metric: 'l2' } }));
    const reset = expectOk(await api.post('/index/reset', { token }));
    expect(reset.mutation).to.deep.equal({ reset: true, deleted: 1 });
    expect(reset.session).to.deep.include({ sessionId: before.session.sessionId, initialized: false, vectorCount: 0 });
    expect(reset.session.config).to.deep.include({ dimensions: null, metric: null });
    const again = expectOk(await api.post('/vectors/add', { token, body: { id: 'a', vector: [1, 2, 3], metric: 'cosine' } }));
    expect(again.session.config).to.deep.include({ dimensions: 3, metric: 'cosine' });
  });

  it('new -> new by /index/reset and /vectors/clear on an empty session', async () => {
    const token = await api.token();
    expect(expectOk(await api.post('/index/reset', { token })).mutation).to.deep.equal({ reset: true, deleted: 0 });
    const cleared = expectOk(await api.post('/vectors/clear', { token }));
    expect(cleared.mutation).to.deep.equal({ deleted: 0 });
    expect(cleared.session.initialized).to.equal(false);
  });

  it("reset frees the session's linear memory", async () => {
    const token = await api.token();
    expectOk(await api.post('/vectors/add', { token, body: { id: 'a', vector: new Array(512).fill(1) } }));
    expect(expectOk(await api.get('/session', { token })).stats.linearMemoryBytes).to.be.above(0);
    expectOk(await api.post('/index/reset', { token }));
    expect(expectOk(await api.get('/session', { token })).stats.linearMemoryBytes).to.equal(0);
  });

  it('a change moves updatedAt; a read does not', async () => {
    const token = await api.token();
    const created = (await sessionOf(api, token)).updatedAt;
    await new Promise((resolve) => setTimeout(resolve, 20));
    await api.post('/vectors/has', { token, body: { id: 'x' } });
    expect((await sessionOf(api, token)).updatedAt).to.equal(created);
    const added = expectOk(await api.post('/vectors/add', { token, body: { id: 'a', vector: [1] } }));
    expect(Date.parse(added.session.updatedAt)).to.be.above(Date.parse(created));
  });
});
