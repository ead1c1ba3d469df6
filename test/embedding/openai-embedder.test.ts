// OpenAiEmbedder against a real HTTP server on 127.0.0.1 speaking the
// /v1/embeddings protocol: its vectors (the server's, normalised, in the
// texts' order), batching, retries then success, timeouts, 5xx, 429,
// malformed answers and wrong dimensions answered with stable codes, the
// in-flight limits, and the API key sent upstream but in no error.
import { expect } from 'chai';
import { ApiError } from '../../src/errors.js';
import { OpenAiEmbedder, type OpenAiEmbedderOptions } from '../../src/embedding/openai-embedder.js';
import { goodAnswer as good, rawVector, type SeenRequest as Seen, unit, useEmbeddingEndpoint } from '../helpers/embedding-endpoint.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

const DIMS = 4;
const KEY = 'sk-test-secret-key-123';

describe('OpenAiEmbedder (an OpenAI-compatible endpoint over HTTP)', () => {
  const endpoint = useEmbeddingEndpoint();

  const embedder = (options: Partial<OpenAiEmbedderOptions> = {}) =>
    new OpenAiEmbedder({
      url: endpoint.url,
      model: 'nomic-embed-text',
      apiKey: KEY,
      dimensions: DIMS,
      timeoutMs: 500,
      attempts: 3,
      batchTexts: 2,
      textsInFlightPerToken: 10,
      textsInFlight: 20,
      backoffMs: 10,
      ...options,
    });

  /** The ApiError `promise` rejects with. */
  async function failure(promise: Promise<unknown>): Promise<ApiError> {
    try {
      await promise;
    } catch (err) {
      expect(err).to.be.instanceOf(ApiError);
      return err as ApiError;
    }
    throw new Error('expected a rejection');
  }

  /** No part of an error carries the key. */
  const keyless = (err: ApiError) => expect(JSON.stringify([err.message, err.details, err.headers])).not.to.include(KEY);

  it('answers each text its vector normalised, in order, in batches of batchTexts, with the model and the key sent', async () => {
    const texts = ['alpha', 'beta beta', 'gamma', 'δέλτα', 'e'];
    const vectors = await embedder().embed(texts, 'owner');
    expect(vectors.map((v) => Array.from(v))).to.deep.equal(texts.map((t) => unit(rawVector(t))));
    for (const v of vectors) expect(Math.abs(Math.hypot(...v) - 1)).to.be.below(1e-6);
    expect(endpoint.seen.map((s) => s.body.input)).to.deep.equal([['alpha', 'beta beta'], ['gamma', 'δέλτα'], ['e']]);
    expect(endpoint.seen.every((s) => s.body.model === 'nomic-embed-text' && s.authorization === `Bearer ${KEY}`)).to.equal(true);
  });

  it('sends no Authorization header without a key', async () => {
    await embedder({ apiKey: undefined }).embed(['x'], 'owner');
    expect(endpoint.seen[0].authorization).to.equal(undefined);
  });

  it('retries a 5xx and a dropped connection with backoff, then succeeds', async () => {
    endpoint.behave = (s, res, n) => {
      if (n === 1) res.writeHead(500).end('boom');
      else if (n === 2) res.socket?.destroy();
      else good(s, res, n);
    };
    const started = performance.now();
    const [vector] = await embedder().embed(['retry me'], 'owner');
    expect(Array.from(vector)).to.deep.equal(unit(rawVector('retry me')));
    expect(endpoint.seen).to.have.length(3);
    expect(performance.now() - started).to.be.at.least(10 + 20);
  });

  it('answers 503 EMBEDDING_UNAVAILABLE with Retry-After after `attempts` 5xx, and stops there', async () => {
    endpoint.behave = (_s, res) => res.writeHead(503).end();
    const err = await failure(embedder().embed(['a'], 'owner'));
    expect([err.status, err.code]).to.deep.equal([503, 'EMBEDDING_UNAVAILABLE']);
    expect(err.headers?.['Retry-After']).to.match(/^\d+$/);
    expect(err.details).to.include({ tries: 3, upstreamStatus: 503 });
    expect(endpoint.seen).to.have.length(3);
    keyless(err);
  });

  it('answers 503 after a timeout on every try, within attempts x timeoutMs', async () => {
    endpoint.behave = () => {}; // never answers
    const started = performance.now();
    const err = await failure(embedder({ timeoutMs: 100, attempts: 2 }).embed(['slow'], 'owner'));
    const took = performance.now() - started;
    expect([err.status, err.code]).to.deep.equal([503, 'EMBEDDING_UNAVAILABLE']);
    expect(err.message).to.include('no answer within 100 ms');
    expect(took).to.be.within(200, 1500);
    expect(endpoint.seen).to.have.length(2);
  });

  it('answers 503 when a body stalls midway (the timeout covers the whole answer)', async () => {
    endpoint.behave = (_s, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write('{"data": [');
    };
    const err = await failure(embedder({ timeoutMs: 100, attempts: 1 }).embed(['x'], 'owner'));
    expect(err.code).to.equal('EMBEDDING_UNAVAILABLE');
  });

  it('answers 503 when nothing listens at the URL', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise((resolve) => closed.close(resolve));
    const err = await failure(embedder({ url: `http://127.0.0.1:${port}/v1/embeddings`, attempts: 2 }).embed(['x'], 'owner'));
    expect(err.code).to.equal('EMBEDDING_UNAVAILABLE');
    expect(err.message).to.include('unreachable');
  });

  it('retries a 429 after its Retry-After, and answers 503 with Retry-After when it persists', async () => {
    endpoint.behave = (s, res, n) => (n === 1 ? res.writeHead(429, { 'retry-after': '0' }).end() : good(s, res, n));
    expect(await embedder().embed(['x'], 'owner')).to.have.length(1);
    expect(endpoint.seen).to.have.length(2);
    endpoint.seen = [];
    endpoint.behave = (_s, res) => res.writeHead(429, { 'retry-after': '0' }).end('{"error":{"message":"slow down"}}');
    const err = await failure(embedder().embed(['x'], 'owner'));
    expect([err.status, err.code, err.details?.upstreamStatus]).to.deep.equal([503, 'EMBEDDING_UNAVAILABLE', 429]);
    expect(err.headers).to.have.property('Retry-After');
    expect(endpoint.seen).to.have.length(3);
  });

  it('answers a 4xx at once with 502 EMBEDDING_UPSTREAM_ERROR and the upstream message, the key cut out', async () => {
    endpoint.behave = (_s, res) =>
      res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `model not found (key ${KEY})` } }));
    const err = await failure(embedder().embed(['x'], 'owner'));
    expect([err.status, err.code, err.details?.upstreamStatus]).to.deep.equal([502, 'EMBEDDING_UPSTREAM_ERROR', 400]);
    expect(err.message).to.include('model not found (key [EMBEDDING_API_KEY])');
    expect(endpoint.seen).to.have.length(1);
    keyless(err);
  });

  it('answers 401 and 403 with 502 and none of the upstream message (it may quote part of the key)', async () => {
    for (const status of [401, 403]) {
      endpoint.behave = (_s, res) =>
        res.writeHead(status).end(JSON.stringify({ error: { message: `Incorrect API key provided: ${KEY.slice(0, 6)}***${KEY.slice(-4)}` } }));
      const err = await failure(embedder().embed(['x'], 'owner'));
      expect([err.status, err.code, err.details?.upstreamStatus]).to.deep.equal([502, 'EMBEDDING_UPSTREAM_ERROR', status]);
      expect(err.message).to.include('refused the key').and.not.include(KEY.slice(-4));
    }
  });

  const malformed: [string, (s: Seen) => unknown, string][] = [
    ['not JSON', () => 'not json', 'not JSON'],
    ['no data', () => ({ object: 'list' }), 'no vectors'],
    ['one vector too few', (s) => ({ data: s.body.input.slice(1).map((t, index) => ({ index, embedding: rawVector(t) })) }), 'vectors for 2 texts'],
    ['a repeated index', (s) => ({ data: s.body.input.map((t) => ({ index: 0, embedding: rawVector(t) })) }), 'repeated index'],
    ['an index out of range', (s) => ({ data: s.body.input.map((t, i) => ({ index: i + 5, embedding: rawVector(t) })) }), 'bad or repeated index'],
    ['the wrong dimension', (s) => ({ data: s.body.input.map((t, index) => ({ index, embedding: [...rawVector(t), 1] })) }), 'has 5 numbers'],
    ['a string in a vector', (s) => ({ data: s.body.input.map((_t, index) => ({ index, embedding: [1, '2', 3, 4] })) }), 'not a finite number'],
    ['a null in a vector', (s) => ({ data: s.body.input.map((_t, index) => ({ index, embedding: [1, null, 3, 4] })) }), 'not a finite number'],
    ['a zero vector', (s) => ({ data: s.body.input.map((_t, index) => ({ index, embedding: [0, 0, 0, 0] })) }), 'zero vector'],
    ['an overflowing vector', (s) => ({ data: s.body.input.map((_t, index) => ({ index, embedding: [1e200, 1e200, 0, 0] })) }), 'zero vector'],
  ];
  for (const [name, answer, message] of malformed) {
    it(`answers 502 EMBEDDING_UPSTREAM_ERROR at once for an answer with ${name}`, async () => {
      endpoint.behave = (s, res) => {
        const body = answer(s);
        res.writeHead(200, { 'content-type': 'application/json' }).end(typeof body === 'string' ? body : JSON.stringify(body));
      };
      const err = await failure(embedder().embed(['one', 'two'], 'owner'));
      expect([err.status, err.code]).to.deep.equal([502, 'EMBEDDING_UPSTREAM_ERROR']);
      expect(err.message).to.include(message);
      expect(endpoint.seen).to.have.length(1);
    });
  }

  it('refuses an answer far larger than its vectors take, as 502', async () => {
    endpoint.behave = (_s, res) => res.writeHead(200).end(' '.repeat(200_000));
    const err = await failure(embedder().embed(['x'], 'owner'));
    expect(err.code).to.equal('EMBEDDING_UPSTREAM_ERROR');
  });

  it('takes textsInFlightPerToken texts of one token in flight, refuses one more with 503 EMBEDDING_BUSY, and frees them after', async () => {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    endpoint.behave = (s, res, n) => void held.then(() => good(s, res, n));
    const e = embedder({ textsInFlightPerToken: 4, textsInFlight: 6, batchTexts: 8 });
    const first = e.embed(['a', 'b', 'c'], 'one');
    const second = e.embed(['d'], 'one');
    const err = await failure(e.embed(['e'], 'one'));
    expect([err.status, err.code, err.details?.scope]).to.deep.equal([503, 'EMBEDDING_BUSY', 'token']);
    const third = e.embed(['f', 'g'], 'two');
    expect((await failure(e.embed(['h'], 'three'))).details?.scope).to.equal('server');
    expect(e.textsInFlight).to.equal(6);
    release();
    await Promise.all([first, second, third]);
    expect(e.textsInFlight).to.equal(0);
    expect(await e.embed(['a', 'b', 'c', 'd'], 'one')).to.have.length(4);
  });

  it('frees its in-flight count after a failure', async () => {
    endpoint.behave = (_s, res) => res.writeHead(400).end();
    const e = embedder({ textsInFlightPerToken: 2 });
    await failure(e.embed(['a', 'b'], 'one'));
    expect(e.textsInFlight).to.equal(0);
  });
});
