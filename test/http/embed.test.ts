// POST /embed over HTTP: the builtin model's vectors (equal to the encoder's
// own, unit length, the same on every call and in base64), its limits at the
// limit and one past it, and its errors.
import { expect } from 'chai';
import { loadTextEmbedder } from '../../src/embedding/load-node.js';
import { decodeFloat32Base64 } from '../../src/schemas/base64-float32.js';
import { expectError, expectOk, useServer } from '../helpers/http.js';
import { parseExposition } from '../helpers/prometheus.js';

const TEXTS = ['A cat sits on the mat.', 'Stock markets fell sharply today.', 'Le chat est sur le tapis.', 'éèê 漢字 🙂'];

describe('POST /embed', () => {
  const limits = { maxEmbedTexts: 5, maxEmbedTextBytes: 40, maxEmbedBytes: 100, embeddingThreads: 2 };
  const api = useServer(limits);
  const direct = loadTextEmbedder();

  it('answers the model, its dimensions and one unit vector per text, equal to the encoder run directly', async () => {
    const token = await api.token();
    const body = expectOk(await api.post('/embed', { token, body: { texts: TEXTS } }));
    expect(body.model).to.equal('use-lite-512');
    expect(body.dimensions).to.equal(512);
    expect(body.metrics.textCount).to.equal(TEXTS.length);
    const expected = direct.embed(TEXTS);
    body.vectors.forEach((vector: number[], i: number) => {
      expect(vector).to.have.length(512);
      expect(vector).to.deep.equal(Array.from(expected.subarray(i * 512, (i + 1) * 512)));
      const norm = Math.hypot(...vector);
      expect(Math.abs(norm - 1)).to.be.below(1e-6);
    });
  });

  it('is deterministic, and base64 carries the same float32 bits', async () => {
    const token = await api.token();
    const a = expectOk(await api.post('/embed', { token, body: { texts: TEXTS } })).vectors;
    const b = expectOk(await api.post('/embed', { token, body: { texts: [...TEXTS].reverse() } })).vectors.reverse();
    expect(b).to.deep.equal(a);
    const c = expectOk(await api.post('/embed', { token, body: { texts: TEXTS, vectorEncoding: 'base64' } })).vectors;
    expect(c.map((s: string) => Array.from(decodeFloat32Base64(s)!))).to.deep.equal(a);
  });

  it('takes maxEmbedTexts texts, refuses one more with 400 BATCH_TOO_LARGE', async () => {
    const token = await api.token();
    expect(expectOk(await api.post('/embed', { token, body: { texts: ['a', 'b', 'c', 'd', 'e'] } })).vectors).to.have.length(5);
    const error = expectError(await api.post('/embed', { token, body: { texts: ['a', 'b', 'c', 'd', 'e', 'f'] } }), 400, 'BATCH_TOO_LARGE');
    expect(error.details).to.deep.equal({ path: '/texts', limit: 5, actual: 6 });
  });

  it('takes a text of maxEmbedTextBytes, refuses one byte more with 400 VALIDATION_ERROR at its path', async () => {
    const token = await api.token();
    expectOk(await api.post('/embed', { token, body: { texts: ['é'.repeat(20)] } }));
    const error = expectError(await api.post('/embed', { token, body: { texts: ['ok', `${'é'.repeat(20)}x`] } }), 400, 'VALIDATION_ERROR');
    expect(error.details.issues[0].path).to.equal('/texts/1');
  });

  it('takes texts of maxEmbedBytes together, refuses one byte more', async () => {
    const token = await api.token();
    const forty = 'x'.repeat(40);
    expectOk(await api.post('/embed', { token, body: { texts: [forty, forty, 'y'.repeat(20)] } }));
    const error = expectError(await api.post('/embed', { token, body: { texts: [forty, forty, 'y'.repeat(21)] } }), 400, 'VALIDATION_ERROR');
    expect(error.details.issues[0].path).to.equal('/texts');
  });

  it('refuses an empty text, no texts, and a missing token', async () => {
    const token = await api.token();
    expect(expectError(await api.post('/embed', { token, body: { texts: ['fine', ''] } }), 400, 'VALIDATION_ERROR').details.issues[0].path).to.equal(
      '/texts/1',
    );
    expectError(await api.post('/embed', { token, body: { texts: [] } }), 400, 'VALIDATION_ERROR');
    expectError(await api.post('/embed', { body: { texts: ['a'] } }), 401, 'UNAUTHORIZED');
  });

  it('lists the model and the embedding limits in GET /limits', async () => {
    const { limits: published } = expectOk(await api.get('/limits'));
    expect(published.embedding).to.deep.equal({
      models: [{ name: 'use-lite-512', dimensions: 512, metric: 'cosine', maxTokens: 128 }],
      maxTexts: 5,
      maxTextBytes: 40,
      maxBytes: 100,
      textsInFlight: 8 * 2048,
      textsInFlightPerToken: 2048,
      threads: 2,
    });
  });
});

describe('POST /embed with the default limits', () => {
  const api = useServer({ maxAddManyBatch: 4, maxEmbedTexts: 4, embeddingTextsInFlightPerToken: 4, embeddingTextsInFlight: 6, embeddingThreads: 1 });

  it('truncates a text at the 128 tokens the model reads', async () => {
    const token = await api.token();
    const long = 'word '.repeat(128);
    const [a, b] = expectOk(await api.post('/embed', { token, body: { texts: [long + 'a different ending', long] } })).vectors;
    expect(a).to.deep.equal(b);
  });

  it('counts the thread holding the model and the vectors in flight in the memory budget', async () => {
    const { usage } = expectOk(await api.get('/limits'));
    // One thread started: its encoder's memory (weights and activations) and its heap.
    expect(usage.embeddingBytes).to.be.within(34_000_000 + 28 * 2 ** 20, 34_100_000 + 28 * 2 ** 20);
    expect(usage.memoryUsedBytes).to.be.at.least(usage.embeddingBytes);
  });

  it('answers 503 EMBEDDING_BUSY with Retry-After past the texts in flight of a token, then of the server, and embeds again after', async () => {
    const [a, b] = [await api.token(), await api.token()];
    const texts = Array.from({ length: 4 }, (_, i) => `${'a long sentence about nothing much '.repeat(12)} ${i}`);
    const first = api.post('/embed', { token: a, body: { texts } });
    while (api.embedder.textsInFlight < 4) await new Promise((r) => setTimeout(r, 1));
    const mine = await api.post('/embed', { token: a, body: { texts: ['one more'] } });
    expect(expectError(mine, 503, 'EMBEDDING_BUSY').details).to.deep.equal({ scope: 'token', textsInFlight: 4, textsAsked: 1, limit: 4 });
    expect(mine.headers.get('retry-after')).to.equal('1');
    const theirs = await api.post('/embed', { token: b, body: { texts: ['x', 'y', 'z'] } });
    expect(expectError(theirs, 503, 'EMBEDDING_BUSY').details).to.deep.equal({ scope: 'server', textsInFlight: 4, textsAsked: 3, limit: 6 });
    expectOk(await first);
    expect(api.embedder.textsInFlight).to.equal(0);
    expectOk(await api.post('/embed', { token: b, body: { texts: ['x', 'y', 'z'] } }));
  });

  it('refuses an add-many by text past the texts in flight of its token with 503 EMBEDDING_BUSY, storing nothing', async () => {
    const token = await api.token();
    const filling = api.post('/embed', { token, body: { texts: ['a long sentence about the sea '.repeat(20), 'b', 'c', 'd'] } });
    while (api.embedder.textsInFlight < 4) await new Promise((r) => setTimeout(r, 1));
    expectError(await api.post('/vectors/add-many', { token, body: { vectors: [{ id: 'x', text: 'one more' }] } }), 503, 'EMBEDDING_BUSY');
    expectOk(await filling);
    expect(expectOk(await api.get('/session', { token })).session).to.include({ vectorCount: 0, initialized: false });
  });

  it("embeds a write's texts outside the session's turn: the session's own search answers while they are embedded", async () => {
    const token = await api.token();
    expectOk(await api.post('/vectors/add', { token, body: { id: 'first', text: 'the first record fixes the model' } }));
    const texts = Array.from({ length: 4 }, (_, i) => `${'a sentence long enough to take a while to embed '.repeat(12)} ${i}`);
    let added = false;
    const adding = api.post('/vectors/add-many', { token, body: { vectors: texts.map((text, i) => ({ id: `t${i}`, text })) } }).then((res) => {
      added = true;
      return res;
    });
    while (api.embedder.textsInFlight === 0) await new Promise((r) => setTimeout(r, 1));
    const search = expectOk(await api.post('/search', { token, body: { queryId: 'first', topK: 1 } }));
    expect(added, 'the search waited for the write').to.equal(false);
    expect(search.session.vectorCount).to.equal(1);
    expectOk(await adding);
  });

  it('reports the embedding threads in /metrics', async () => {
    const metrics = parseExposition((await api.get('/metrics')).text).samples;
    expect(metrics.get('tempvec_embedding_threads')).to.equal(1);
    expect(metrics.get('tempvec_embedding_texts_in_flight')).to.equal(0);
    expect(metrics.get('tempvec_embedding_jobs_total')).to.equal(api.embedder.jobsRun).and.above(0);
    expect(metrics.get('tempvec_embedding_threads_replaced_total')).to.equal(0);
  });
});
