// GET /metrics: Prometheus text that parses, whose counters and gauges move
// with the requests made, without a token, id or metadata in it; one registry
// per app; a scrape changes nothing; METRICS_TOKEN guards it.
import { expect } from 'chai';
import { expectError, expectOk, TestServer, useServer } from '../helpers/http.js';
import { parseExposition, type Exposition } from '../helpers/prometheus.js';
import { USAGE_CACHE_MS } from '../../src/metrics/service-metrics.js';

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function scrape(api: TestServer): Promise<Exposition & { text: string }> {
  const res = await api.get('/metrics');
  expect(res.status).to.equal(200);
  expect(res.headers.get('content-type')).to.match(/^text\/plain; version=0\.0\.4/);
  return { ...parseExposition(res.text), text: res.text };
}

const value = (e: Exposition, key: string) => e.samples.get(key) ?? 0;
const requests = (method: string, route: string, status: number) => `tempvec_http_requests_total{method="${method}",route="${route}",status="${status}"}`;

describe('GET /metrics', () => {
  const frozen = Date.now();
  const api = useServer({ tokenRatePerMin: 0, requestRatePerSec: 2, maxSessions: 1000, memoryBudgetBytes: 1 << 30 }, () => frozen);
  const other = useServer();

  it('is Prometheus text exposition with the families operators need', async () => {
    const { types } = await scrape(api);
    expect(Object.fromEntries(types)).to.include({
      tempvec_http_requests_total: 'counter',
      tempvec_http_request_duration_seconds: 'histogram',
      tempvec_http_errors_total: 'counter',
      tempvec_rate_limited_requests_total: 'counter',
      tempvec_rejected_requests_total: 'counter',
      tempvec_kernel_seconds: 'histogram',
      tempvec_sessions: 'gauge',
      tempvec_data_dir_bytes: 'gauge',
      tempvec_vectors: 'gauge',
      tempvec_linear_memory_bytes: 'gauge',
      tempvec_memory_budget_bytes: 'gauge',
      tempvec_memory_budget_used_ratio: 'gauge',
      tempvec_event_loop_delay_p99_seconds: 'gauge',
      tempvec_event_loop_delay_max_seconds: 'gauge',
    });
  });

  it('reports a block of the main thread as event-loop delay over its window; a scrape resets nothing', async () => {
    // A window of its own (the shortest allowed), so what other tests did is out of it soon.
    const windowed = new TestServer({ metricsWindowMs: 2000 });
    await windowed.start();
    try {
      await sleep(2100);
      expect(value(await scrape(windowed), 'tempvec_event_loop_delay_max_seconds')).to.be.below(0.25);
      // Hold the thread 250 ms between two turns of the loop (the probe's timer then fires 250 ms late).
      await new Promise<void>((resolve) =>
        setTimeout(() => {
          const t0 = performance.now();
          while (performance.now() - t0 < 250);
          setTimeout(resolve, 5);
        }, 5),
      );
      // Any number of scrapes see the block: none of them resets the window.
      for (let i = 0; i < 3; i++) {
        const held = await scrape(windowed);
        expect(value(held, 'tempvec_event_loop_delay_max_seconds')).to.be.at.least(0.25);
        expect(value(held, 'tempvec_event_loop_delay_p99_seconds')).to.be.above(0).and.at.most(value(held, 'tempvec_event_loop_delay_max_seconds'));
      }
      // Once the window has moved past it, it is gone.
      await sleep(3100);
      expect(value(await scrape(windowed), 'tempvec_event_loop_delay_max_seconds')).to.be.below(0.25);
    } finally {
      await windowed.close();
    }
  });

  it('counts requests by route pattern and status, and times them', async () => {
    const before = await scrape(api);
    const token = await api.token();
    expectOk(
      await api.post('/vectors/add-many', {
        token,
        body: {
          vectors: [
            { id: 'a', vector: [1, 0] },
            { id: 'b', vector: [0, 1] },
          ],
        },
      }),
    );
    expectOk(await api.post('/search', { token, body: { queryVector: [1, 0] } }));
    expectError(await api.post('/search', { token, body: { queryVector: [1, 0, 0] } }), 400, 'DIMENSION_MISMATCH');
    expectOk(await api.post('/search', { token, body: { queryVector: [0, 1] } }));
    // The clock stands still: the burst of 4 is spent.
    expectError(await api.post('/search', { token, body: { queryVector: [1, 0] } }), 429, 'RATE_LIMITED');
    expectError(await api.get('/no/such/route'), 404, 'NOT_FOUND');
    const after = await scrape(api);
    const moved = (key: string) => value(after, key) - value(before, key);
    expect(moved(requests('POST', '/token', 201))).to.equal(1);
    expect(moved(requests('POST', '/vectors/add-many', 200))).to.equal(1);
    expect(moved(requests('POST', '/search', 200))).to.equal(2);
    expect(moved(requests('POST', '/search', 400))).to.equal(1);
    expect(moved(requests('POST', '/search', 429))).to.equal(1);
    expect(moved(requests('GET', 'unmatched', 404))).to.equal(1);
    expect(moved('tempvec_http_errors_total{code="DIMENSION_MISMATCH"}')).to.equal(1);
    expect(moved('tempvec_rate_limited_requests_total')).to.equal(1);
    expect(moved('tempvec_http_request_duration_seconds_count{method="POST",route="/search"}')).to.equal(4);
    expect(moved('tempvec_http_request_duration_seconds_bucket{le="+Inf",method="POST",route="/search"}')).to.equal(4);
    expect(moved('tempvec_kernel_seconds_count{operation="search"}')).to.equal(2);
    expect(value(after, 'tempvec_kernel_seconds_sum{operation="search"}')).to.be.greaterThan(0);
  });

  it('reports sessions, vectors and memory as /limits does', async () => {
    const token = await api.token();
    expectOk(await api.post('/vectors/add-many', { token, body: { vectors: Array.from({ length: 5 }, (_, i) => ({ id: `v${i}`, vector: [i + 1, 1, 1] })) } }));
    // Usage figures are computed at most once per USAGE_CACHE_MS.
    await sleep(USAGE_CACHE_MS + 50);
    const metrics = await scrape(api);
    const { usage } = expectOk(await api.get('/limits'));
    expect(value(metrics, 'tempvec_sessions')).to.equal(usage.activeSessions);
    expect(value(metrics, 'tempvec_linear_memory_bytes')).to.equal(usage.linearMemoryBytes).and.greaterThan(0);
    expect(value(metrics, 'tempvec_memory_budget_bytes')).to.equal(1 << 30);
    expect(value(metrics, 'tempvec_memory_budget_used_ratio')).to.be.closeTo(usage.linearMemoryBytes / (1 << 30), 1e-12);
    expect(value(metrics, 'tempvec_vectors')).to.equal(api.store.vectorCount()).and.at.least(7);
  });

  it('computes usage figures at most once per USAGE_CACHE_MS, however often it is scraped', async () => {
    const token = await api.token();
    await sleep(USAGE_CACHE_MS + 50);
    const before = value(await scrape(api), 'tempvec_vectors');
    expect(before).to.equal(api.store.vectorCount());
    expectOk(
      await api.post('/vectors/add-many', {
        token,
        body: {
          vectors: [
            { id: 'c1', vector: [1, 2, 3] },
            { id: 'c2', vector: [3, 2, 1] },
          ],
        },
      }),
    );
    // Within the cache's time: the figure of the scrape before (cheap to scrape in a loop).
    expect(value(await scrape(api), 'tempvec_vectors')).to.equal(before);
    await sleep(USAGE_CACHE_MS + 50);
    expect(value(await scrape(api), 'tempvec_vectors')).to.equal(before + 2);
  });

  it('answers only the holder of METRICS_TOKEN when it is set', async () => {
    const guarded = new TestServer({ metricsToken: 'metrics-secret-6d2a' });
    await guarded.start();
    try {
      const session = await guarded.token();
      for (const authorization of [undefined, 'Bearer wrong', `Bearer ${session}`, 'metrics-secret-6d2a']) {
        const refused = await guarded.get('/metrics', { authorization });
        expectError(refused, 401, 'UNAUTHORIZED');
        expect(refused.headers.get('www-authenticate')).to.match(/^Bearer/);
        expect(refused.text).to.not.include('tempvec_sessions');
      }
      for (const authorization of ['Bearer metrics-secret-6d2a', 'bearer metrics-secret-6d2a']) {
        const res = await guarded.get('/metrics', { authorization });
        expect(res.status).to.equal(200);
        expect(res.text).to.include('tempvec_sessions');
      }
      // Without METRICS_TOKEN it stays open.
      expect((await api.get('/metrics')).status).to.equal(200);
    } finally {
      await guarded.close();
    }
  });

  it('counts 503 refusals by code', async () => {
    const full = new TestServer({ maxSessions: 1, tokenRatePerMin: 0 });
    await full.start();
    try {
      await full.token();
      expectError(await full.post('/token'), 503, 'SERVER_AT_CAPACITY');
      expect(value(await scrape(full), 'tempvec_rejected_requests_total{code="SERVER_AT_CAPACITY"}')).to.equal(1);
    } finally {
      await full.close();
    }
  });

  it('reveals no token, vector id, metadata or request path', async () => {
    const token = await api.token();
    const id = 'secret-id-4f1c';
    expectOk(await api.post('/vectors/add', { token, body: { id, vector: [1, 2, 3], metadata: { owner: 'secret-owner-9a2e' } } }));
    await api.get('/secret-path-77d0', { token });
    await api.get('/session', { authorization: 'Bearer secret-garbage-3b5e' });
    const { text } = await scrape(api);
    for (const secret of [token, token.slice(0, 12), id, 'secret-owner', 'secret-path', 'secret-garbage']) expect(text).to.not.include(secret);
  });

  it('keeps one registry per app', async () => {
    const mine = value(await scrape(api), requests('GET', '/metrics', 200));
    await scrape(other);
    const theirs = value(await scrape(other), requests('GET', '/metrics', 200));
    expect(mine).to.be.at.least(4);
    expect(theirs).to.equal(1);
  });
});
