// Searches on the kernel pool, through the HTTP API: the same answers with
// KERNEL_THREADS 1 and 3; writes racing searches never show a half-written
// or deleted vector; a killed thread fails only its search (503).
import { expect } from 'chai';
import { POOL_MIN_WORK } from '../../src/kernel/search-path.js';
import { expectError, useServer, type TestServer } from '../helpers/http.js';
import { parseExposition } from '../helpers/prometheus.js';
import { seededRng } from '../helpers/random.js';

type Vec = number[];

function randomVectors(random: () => number, n: number, dim: number): Vec[] {
  // Components on a grid of eighths: float32-exact, with equal rows and exact ties.
  return Array.from({ length: n }, () => Array.from({ length: dim }, () => Math.round((random() * 2 - 1) * 8) / 8 || 0.125));
}

async function fill(
  api: TestServer,
  vectors: Vec[],
  options: { metric: string; vectorType: string },
  metadataOf: (i: number) => Record<string, number> = (i) => ({ group: i % 5 }),
) {
  const token = await api.token();
  for (let at = 0; at < vectors.length; at += 1000) {
    const batch = vectors.slice(at, at + 1000).map((vector, j) => ({ id: `v${at + j}`, vector, metadata: metadataOf(at + j) }));
    const res = await api.post('/vectors/add-many', { token, body: { vectors: batch, ...options } });
    expect(res.status, res.text).to.equal(200);
  }
  return token;
}

const dot = (a: Vec, b: Vec) => a.reduce((sum, x, i) => sum + x * b[i], 0);
const cosine = (a: Vec, b: Vec) => dot(a, b) / Math.sqrt(dot(a, a) * dot(b, b));

describe('searches on the kernel pool', function () {
  this.timeout(180_000);
  const inline = useServer({ kernelThreads: 1, requestRatePerSec: 0 });
  const pooled = useServer({ kernelThreads: 3, requestRatePerSec: 0 });

  it('answer exactly as with KERNEL_THREADS=1: metrics, int8, filters, ids, thresholds', async () => {
    const random = seededRng(17);
    const dim = 128,
      n = 2000,
      queries = 40;
    expect((queries * n * dim) / 4, 'int8 work').to.be.greaterThan(POOL_MIN_WORK);
    const vectors = randomVectors(random, n, dim);
    for (const metric of ['cosine', 'l2']) {
      for (const vectorType of ['float32', 'int8']) {
        const tokens = [await fill(inline, vectors, { metric, vectorType }), await fill(pooled, vectors, { metric, vectorType })];
        const queryVectors = randomVectors(random, queries, dim);
        const bodies = [
          { queryVectors, topK: 10 },
          { queryVectors, topK: 25, filter: { group: { $in: [1, 3] } }, includeMetadata: true },
          { queryVectors, topK: 5, candidatePool: 300 },
          { queryIds: Array.from({ length: queries }, (_, j) => `v${j * 37}`), topK: 7 },
          { queryVectors, topK: 50, scoreThreshold: metric === 'cosine' ? 0.1 : 9 },
        ];
        const jobsBefore = pooled.pool!.jobsRun;
        for (const body of bodies) {
          const [want, got] = await Promise.all([0, 1].map((i) => [inline, pooled][i].post('/search-many', { token: tokens[i], body })));
          expect(got.status, got.text).to.equal(200);
          expect(got.body.results, `${metric} ${vectorType} ${JSON.stringify(Object.keys(body))}`).to.deep.equal(want.body.results);
        }
        expect(pooled.pool!.jobsRun, 'searches ran on the pool').to.be.greaterThan(jobsBefore);
      }
    }
  });

  it('runs a large single query on the pool with the inline answer', async () => {
    const random = seededRng(5);
    const dim = 1024,
      n = 2000;
    expect(n * dim).to.be.at.least(POOL_MIN_WORK);
    const vectors = randomVectors(random, n, dim);
    const tokens = [await fill(inline, vectors, { metric: 'l2', vectorType: 'float32' }), await fill(pooled, vectors, { metric: 'l2', vectorType: 'float32' })];
    const jobsBefore = pooled.pool!.jobsRun;
    for (const topK of [1, 10, 200]) {
      const body = { queryVector: randomVectors(random, 1, dim)[0], topK };
      const [want, got] = await Promise.all([0, 1].map((i) => [inline, pooled][i].post('/search', { token: tokens[i], body })));
      expect(got.body.results).to.deep.equal(want.body.results);
    }
    expect(pooled.pool!.jobsRun).to.be.greaterThan(jobsBefore);
  });

  it('runs a large single int8 query on the pool with the inline answer: filtered and by queryId too', async () => {
    const random = seededRng(8);
    const dim = 1024,
      n = 10_000;
    const vectors = randomVectors(random, n, dim);
    // base64 float32: a quarter of the JSON text of these vectors.
    const asBase64 = (v: Vec) => Buffer.from(Float32Array.from(v).buffer).toString('base64');
    const options = { metric: 'cosine', vectorType: 'int8' };
    const tokens: string[] = [];
    for (const api of [inline, pooled]) {
      const token = await api.token();
      for (let at = 0; at < n; at += 1000) {
        const batch = vectors.slice(at, at + 1000).map((vector, j) => ({ id: `v${at + j}`, vector: asBase64(vector), metadata: { group: (at + j) % 5 } }));
        const res = await api.post('/vectors/add-many', { token, body: { vectors: batch, ...options } });
        expect(res.status, res.text).to.equal(200);
      }
      tokens.push(token);
    }
    const filter = { group: { $ne: 4 } };
    expect((n * 0.8 * dim) / 4, 'filtered int8 work').to.be.at.least(POOL_MIN_WORK);
    const queryVector = randomVectors(random, 1, dim)[0];
    const bodies = [
      { queryVector, topK: 10 },
      { queryVector, topK: 10, filter, candidatePool: 300 },
      { queryId: 'v1234', topK: 10, filter },
      { queryVector, topK: 100, candidatePool: 2048, includeMetadata: true },
    ];
    for (const body of bodies) {
      const jobsBefore = pooled.pool!.jobsRun;
      const [want, got] = await Promise.all([0, 1].map((i) => [inline, pooled][i].post('/search', { token: tokens[i], body })));
      expect(got.status, got.text).to.equal(200);
      expect(got.body.results, JSON.stringify(Object.keys(body))).to.deep.equal(want.body.results);
      expect(pooled.pool!.jobsRun - jobsBefore, 'one call per range of rows').to.be.at.least(pooled.pool!.size);
    }
  });

  it('never shows a deleted id after the delete, nor a half-written vector', async () => {
    const random = seededRng(99);
    const dim = 128,
      n = 3000;
    const model = new Map<string, Vec>(randomVectors(random, n, dim).map((v, i) => [`v${i}`, v]));
    const token = await fill(pooled, [...model.values()], { metric: 'cosine', vectorType: 'float32' }, () => ({}));
    const queryVectors = randomVectors(random, 16, dim);
    /** Every hit's score is that of the vector stored under its id before or after this round's writes. */
    const checkHits = (queries: Vec[], results: { id: string; score: number }[][], before: Map<string, Vec>, after: Map<string, Vec>) => {
      results.forEach((hits, j) => {
        for (const { id, score } of hits) {
          const scores = [before.get(id), after.get(id)].filter((v): v is Vec => v !== undefined).map((v) => cosine(queries[j], v));
          expect(
            scores.some((s) => Math.abs(s - score) < 1e-5),
            `score of ${id}`,
          ).to.equal(true);
        }
      });
    };
    for (let round = 0; round < 12; round++) {
      const ids = [...model.keys()];
      const deleted = ids[Math.floor(random() * ids.length)];
      const replaced = ids.filter((id) => id !== deleted)[Math.floor(random() * (ids.length - 1))];
      // The answers' top hits: queries equal to those rows make them rank first if visible.
      const probes = [model.get(deleted)!, ...queryVectors.slice(1)];
      const before = new Map(model);
      const replacement = randomVectors(random, 1, dim)[0];
      const searches = Array.from({ length: 4 }, () => pooled.post('/search-many', { token, body: { queryVectors: probes, topK: 10 } }));
      const writes = [
        pooled.post('/vectors/delete', { token, body: { id: deleted } }),
        pooled.post('/vectors/add', { token, body: { id: replaced, vector: replacement } }),
      ];
      const [searchAnswers, writeAnswers] = await Promise.all([Promise.all(searches), Promise.all(writes)]);
      for (const res of writeAnswers) expect(res.status, res.text).to.equal(200);
      model.delete(deleted);
      model.set(replaced, replacement);
      for (const res of searchAnswers) {
        expect(res.status, res.text).to.equal(200);
        checkHits(probes, res.body.results, before, model);
      }
      const probesAfter = [probes[0], replacement, ...queryVectors.slice(2)];
      const after = await pooled.post('/search-many', { token, body: { queryVectors: probesAfter, topK: 10 } });
      expect(after.body.results[0].map((h: { id: string }) => h.id)).to.not.include(deleted);
      expect(after.body.results[1][0].id).to.equal(replaced);
      checkHits(probesAfter, after.body.results, model, model);
    }
  });

  it('fails only the search a killed thread held (503), then answers, data intact', async () => {
    const random = seededRng(3);
    const dim = 512,
      n = 5000;
    const vectors = randomVectors(random, n, dim);
    const tokens = [await fill(inline, vectors, { metric: 'l2', vectorType: 'float32' }), await fill(pooled, vectors, { metric: 'l2', vectorType: 'float32' })];
    const queryVectors = randomVectors(random, 64, dim);
    const pool = pooled.pool!;
    // Threads that have served (one that dies before it is ready is not replaced at once).
    await pooled.post('/search-many', { token: tokens[1], body: { queryVectors, topK: 10 } });
    const running = pooled.post('/search-many', { token: tokens[1], body: { queryVectors, topK: 10 } });
    const deadline = Date.now() + 10_000;
    while (pool.busyWorkers.length === 0 && Date.now() < deadline) await new Promise((resolve) => setImmediate(resolve));
    await pool.busyWorkers[0].terminate();
    expectError(await running, 503, 'KERNEL_THREAD_FAILED');
    const [want, got] = await Promise.all([0, 1].map((i) => [inline, pooled][i].post('/search-many', { token: tokens[i], body: { queryVectors, topK: 10 } })));
    expect(got.status, got.text).to.equal(200);
    expect(got.body.results).to.deep.equal(want.body.results);
    expect((await pooled.get('/session', { token: tokens[1] })).body.session.vectorCount).to.equal(n);
    const metrics = parseExposition((await pooled.get('/metrics')).text).samples;
    expect(metrics.get('tempvec_kernel_threads')).to.equal(3);
    expect(metrics.get('tempvec_kernel_threads_replaced_total')).to.equal(1);
    expect(metrics.get('tempvec_kernel_pool_jobs_total')).to.equal(pool.jobsRun).and.above(0);
    expect(metrics.get('tempvec_rejected_requests_total{code="KERNEL_THREAD_FAILED"}')).to.equal(1);
  });
});
