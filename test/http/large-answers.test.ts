// Large answers (issue 16 part 4): streamed in pieces with back-pressure, the
// same JSON as one string, counted in the memory budget while they are sent,
// capped by MAX_ANSWER_BYTES; a client that stops reading or goes away holds
// nothing past its window.
import { request } from 'node:http';
import { expect } from 'chai';
import { answerStream, jsonPieces, type AnswerPiece } from '../../src/http/answer-stream.js';
import { MetadataJson } from '../../src/index/metadata/metadata-json.js';

const utf8In = new TextEncoder();
const utf8Out = new TextDecoder();
/** An answer's pieces as one text. */
const joined = (pieces: Iterable<AnswerPiece>) => [...pieces].map((p) => (typeof p === 'string' ? p : utf8Out.decode(p))).join('');
import { startApp, type LiveApp } from '../helpers/live-app.js';
import { randomVectors, seededRng } from '../helpers/random.js';

const DIM = 32;
/** Metadata of about 2 KB a vector: 64 queries x topK 100 answer about 11 MB with it. */
const metadataOf = (i: number) => ({ i, text: `doc ${i} `.repeat(200).slice(0, 2000), tags: ['a', `t${i % 17}`] });

async function seeded(live: LiveApp, count = 2000): Promise<string> {
  const token = await live.newToken();
  const vectors = randomVectors(seededRng(7), count, DIM).map((vector, i) => ({ id: `v${i}`, vector, metadata: metadataOf(i) }));
  for (let i = 0; i < count; i += 500) {
    expect((await live.send('POST', '/vectors/add-many', { token, body: { vectors: vectors.slice(i, i + 500) } })).status).to.equal(200);
  }
  return token;
}

/** Send a request and read only its head, then leave the body unread (or destroy the socket). */
function headOnly(url: string, path: string, token: string, body: unknown): Promise<{ status: number; headers: Record<string, unknown>; destroy(): void }> {
  return new Promise((resolve, reject) => {
    const text = JSON.stringify(body);
    const req = request(
      `${url}${path}`,
      { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(text) } },
      (res) => {
        res.pause();
        resolve({ status: res.statusCode!, headers: res.headers, destroy: () => req.destroy() });
      },
    );
    req.on('error', reject);
    req.end(text);
  });
}

describe('large answers', function () {
  this.timeout(60_000);
  let live: LiveApp;
  afterEach(() => live?.close());

  it('writes JSON in pieces exactly as JSON.stringify does', () => {
    const rng = seededRng(3);
    const value = (depth: number): unknown => {
      const r = rng();
      if (depth > 4 || r < 0.3) return [1.5, -0, 'x"\u2028\u00e9', null, true, 1e-7][Math.floor(rng() * 6)];
      if (r < 0.6) return Array.from({ length: Math.floor(rng() * 4) }, () => (rng() < 0.1 ? undefined : value(depth + 1)));
      return Object.fromEntries(
        Array.from({ length: Math.floor(rng() * 4) }, (_, k) => [`k${k}${rng() < 0.1 ? '"' : ''}`, rng() < 0.1 ? undefined : value(depth + 1)]),
      );
    };
    for (let n = 0; n < 300; n++) {
      const v = value(0);
      expect(joined(jsonPieces(v))).to.equal(JSON.stringify(v));
    }
    expect(joined(jsonPieces({ a: new Float32Array([1, 2]), b: new Date(0), c: [[{ d: [1] }]] }))).to.equal(
      JSON.stringify({ a: new Float32Array([1, 2]), b: new Date(0), c: [[{ d: [1] }]] }),
    );
  });

  it('writes stored metadata (MetadataJson) at any depth as its bytes, the same text JSON.stringify gives', () => {
    const rng = seededRng(4);
    const stored = (): MetadataJson => new MetadataJson(utf8In.encode(JSON.stringify({ t: 'é"\u2028'.repeat(Math.floor(rng() * 3)), n: rng() })));
    const value = (depth: number): unknown => {
      const r = rng();
      if (r < 0.2) return stored();
      if (depth > 4 || r < 0.4) return [1.5, 'x', null, true][Math.floor(rng() * 4)];
      if (r < 0.7) return Array.from({ length: Math.floor(rng() * 4) }, () => value(depth + 1));
      return Object.fromEntries(Array.from({ length: Math.floor(rng() * 4) }, (_, k) => [`k${k}`, value(depth + 1)]));
    };
    for (let n = 0; n < 300; n++) {
      const v = { results: [[{ id: 'a', score: 1, metadata: stored() }]], other: value(0) };
      expect(joined(jsonPieces(v))).to.equal(JSON.stringify(v));
    }
  });

  it('gives each of several answer streams read at once its exact text', async () => {
    const answers = Array.from({ length: 3 }, (_, k) => ({
      results: Array.from({ length: 64 }, (_, q) => ({
        matches: Array.from({ length: 100 }, (_, i) => ({ id: `v${k}-${q}-${i}`, score: i / 7, metadata: metadataOf(i) })),
      })),
    }));
    let closed = 0;
    const texts = await Promise.all(
      answers.map(async (fields) => {
        const stream = answerStream(
          '{"success":true',
          fields,
          () => ',"metrics":{}}',
          () => closed++,
        );
        const chunks: Buffer[] = [];
        for await (const chunk of stream) chunks.push(chunk as Buffer);
        return Buffer.concat(chunks).toString('utf8');
      }),
    );
    texts.forEach((text, k) => {
      expect(text).to.equal(JSON.stringify({ success: true, ...answers[k], metrics: {} }));
    });
    expect(closed).to.equal(3);
  });

  it('streams an 11 MB search-many answer: same results as one query at a time, no Content-Length', async () => {
    live = await startApp({ requestRatePerSec: 0 });
    const token = await seeded(live);
    const queries = randomVectors(seededRng(9), 64, DIM);
    const many = await live.send('POST', '/search-many', { token, body: { queryVectors: queries, topK: 100, includeMetadata: true } });
    expect(many.status).to.equal(200);
    expect(many.headers.get('content-length')).to.equal(null);
    expect(many.headers.get('transfer-encoding')).to.equal('chunked');
    expect(many.text.length).to.be.greaterThan(10_000_000);
    for (const j of [0, 31, 63]) {
      const one = await live.send('POST', '/search', { token, body: { queryVector: queries[j], topK: 100, includeMetadata: true } });
      expect(many.body.results[j]).to.deep.equal(one.body.results);
    }
    const small = await live.send('POST', '/search', { token, body: { queryVector: queries[0], topK: 3 } });
    expect(Number(small.headers.get('content-length'))).to.equal(Buffer.byteLength(small.text));
    // The body's latency covers the whole answer built; the header's, the time to its first byte.
    const header = Number(/requestLatency;dur=([\d.]+)/.exec(many.headers.get('server-timing')!)![1]);
    expect(many.body.metrics.requestLatencyMs).to.be.at.least(header);
    expect(many.body.metrics.searchManyMs).to.be.a('number');
    expect(live.store.budget.usage().answersInFlightBytes).to.equal(0);
  });

  it('holds a window per answer whose client stops reading, and nothing once it goes away', async () => {
    live = await startApp({ requestRatePerSec: 0 });
    const token = await seeded(live);
    const body = { queryVectors: randomVectors(seededRng(11), 64, DIM), topK: 100, includeMetadata: true };
    // The attack of issue 16 scaled down: 20 huge answers whose clients read nothing.
    const stalled = await Promise.all(Array.from({ length: 20 }, () => headOnly(live.url, '/search-many', token, body)));
    expect(stalled.map((s) => s.status)).to.deep.equal(Array(20).fill(200));
    const inFlight = live.store.budget.usage().answersInFlightBytes;
    expect(inFlight)
      .to.be.greaterThan(0)
      .and.at.most(20 * 256 * 1024);
    const rss = process.memoryUsage().rss;
    // The server still answers a small session at once.
    const small = await live.newToken();
    expect((await live.send('POST', '/vectors/add', { token: small, body: { id: 'x', vector: [1, 2, 3] } })).status).to.equal(200);
    expect((await live.send('POST', '/search', { token: small, body: { queryVector: [1, 2, 3] } })).status).to.equal(200);
    for (const s of stalled) s.destroy();
    for (let i = 0; i < 100 && live.store.budget.usage().answersInFlightBytes > 0; i++) await new Promise((r) => setTimeout(r, 20));
    expect(live.store.budget.usage().answersInFlightBytes).to.equal(0);
    // 20 answers of 11 MB held whole would be 220 MB; the windows are 5 MB.
    expect(process.memoryUsage().rss - rss).to.be.below(150 * 1024 * 1024);
  });

  it('refuses an answer past MAX_ANSWER_BYTES with 400 ANSWER_TOO_LARGE naming a smaller request', async () => {
    live = await startApp({ requestRatePerSec: 0, maxAnswerBytes: 1024 * 1024 });
    const token = await seeded(live, 500);
    const body = { queryVectors: randomVectors(seededRng(5), 16, DIM), topK: 100, includeMetadata: true };
    const refused = await live.send('POST', '/search-many', { token, body });
    expect(refused.status).to.equal(400);
    expect(refused.body.error.code).to.equal('ANSWER_TOO_LARGE');
    expect(refused.body.error.message)
      .to.match(/topK/)
      .and.match(/includeMetadata/);
    expect(refused.body.error.details.maxAnswerBytes).to.equal(1024 * 1024);
    expect(refused.body.error.details.answerBytes).to.be.greaterThan(1024 * 1024);
    const lean = await live.send('POST', '/search-many', { token, body: { ...body, includeMetadata: false } });
    expect(lean.status).to.equal(200);
    // The estimate errs high, never low.
    const withMeta = await live.send('POST', '/search-many', { token, body: { ...body, queryVectors: body.queryVectors.slice(0, 4) } });
    expect(withMeta.status).to.equal(200);
    expect((await live.send('GET', '/limits')).body.limits.maxAnswerBytes).to.equal(1024 * 1024);
  });
});
