// LocalIndex.embed in Chromium: a page that imports /sdk.js embeds the 60
// fixture texts (English, other scripts, code, emoji, past 128 tokens) and
// gets the Node encoder's vectors (src/embedding/load-node.ts + encoder.ts):
// asserted within 1e-6 per component, bit for bit expected (same kernel,
// IEEE operations only). The page fetches nothing from any other origin and
// nothing before its first embed; the model's files once for the page.
// Prints the first-use load time and the page's texts/s on its one thread.
import { expect } from 'chai';
import { writeFileSync } from 'node:fs';
import { loadTextEmbedder } from '../../src/embedding/load-node.js';
import { MODEL_FILES_PREFIX } from '../../src/embedding/model-files.js';
import { withDemoPage, OUTPUT_DIR } from '../helpers/browser.js';
import { fixture, maxAbsDiff } from '../embedding/fixture.js';

const texts = fixture.map((e) => e.text);

interface PageRun {
  vectors: number[][];
  model: string;
  dimensions: number;
  firstCallMs: number;
  load: { from: string; bytes: number; filesMs: number; ms: number };
  afterImport: number;
  afterLoad: number;
  batchTextsPerSec: number;
  singleTextsPerSec: number;
  secondIndexRequests: number;
}

describe('LocalIndex.embed in the browser (Chromium)', function () {
  this.timeout(120_000);
  const demo = withDemoPage();
  const requested: string[] = [];
  const blocked: string[] = [];
  let run: PageRun;
  let cachedLoad: PageRun['load'] | undefined;

  before(async () => {
    await demo.page.context().route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(`${demo.live.url}/`)) return route.continue();
      blocked.push(url);
      return route.abort();
    });
    demo.page.on('request', (request) => requested.push(request.url()));
    run = await demo.page.evaluate(async (texts) => {
      const count = () => performance.getEntriesByType('resource').filter((e) => e.name.includes('/models/')).length;
      const { LocalIndex } = await import('/sdk.js' as string);
      const afterImport = count();
      const local = await LocalIndex.load();
      const afterLoad = count();
      const t0 = performance.now();
      const first = await local.embed(texts);
      const firstCallMs = performance.now() - t0;
      // Throughput on the page's one thread: batches of all 60, and one text per call.
      const t1 = performance.now();
      for (let r = 0; r < 3; r++) await local.embed(texts);
      const batchTextsPerSec = (3 * texts.length) / ((performance.now() - t1) / 1000);
      const t2 = performance.now();
      for (const text of texts) await local.embed([text]);
      const singleTextsPerSec = texts.length / ((performance.now() - t2) / 1000);
      const before = count();
      const other = await LocalIndex.load();
      await other.embed(['shared across indexes']);
      return {
        vectors: first.vectors.map((v: Float32Array) => Array.from(v)),
        model: first.model,
        dimensions: first.dimensions,
        firstCallMs,
        load: await local.embedderLoad(),
        afterImport,
        afterLoad,
        batchTextsPerSec,
        singleTextsPerSec,
        secondIndexRequests: count() - before,
      };
    }, texts);
  });

  it("gives the Node encoder's vectors (max |diff| per component at most 1e-6; bit for bit expected)", () => {
    const node = loadTextEmbedder().embed(texts);
    expect(run.model).to.equal('use-lite-512');
    expect(run.dimensions).to.equal(512);
    expect(run.vectors).to.have.length(texts.length);
    let worst = 0;
    let equal = 0;
    run.vectors.forEach((v, i) => {
      const d = maxAbsDiff(v, node.subarray(i * 512, (i + 1) * 512));
      worst = Math.max(worst, d);
      if (d === 0) equal++;
    });
    console.log(`      page vs Node encoder: max |diff| ${worst} over ${texts.length} texts x 512 (${equal} texts bit for bit)`);
    expect(worst).to.be.at.most(1e-6);
  });

  it('fetches nothing from another origin, no model file before the first embed, each file once', () => {
    expect(blocked).to.deep.equal([]);
    expect(requested.every((url) => url.startsWith(`${demo.live.url}/`))).to.equal(true);
    expect(run.afterImport).to.equal(0);
    expect(run.afterLoad).to.equal(0);
    const modelRequests = requested.filter((url) => url.includes(`${MODEL_FILES_PREFIX}/`)).map((url) => new URL(url).pathname);
    // The manifest, the kernel, model.json, vocab.json, 7 shards; a second index reuses them.
    expect(modelRequests).to.have.length(11);
    expect(new Set(modelRequests).size).to.equal(11);
    expect(run.secondIndexRequests).to.equal(0);
    expect(demo.errors).to.deep.equal([]);
  });

  it("a second page of the origin takes the model's files from the browser's cache (immutable), asking the server only for the manifest", async () => {
    // A context of its own (pages in one context share its HTTP cache): a first page fills it, a second uses it.
    const context = await demo.browser.newContext();
    const embedIn = async () => {
      const page = await context.newPage();
      await page.addInitScript({ content: 'globalThis.__name = (fn) => fn;' });
      const cdp = await context.newCDPSession(page);
      await cdp.send('Network.enable');
      const fromNetwork: string[] = [];
      const fromCache: string[] = [];
      cdp.on('Network.responseReceived', (e) => {
        if (!e.response.url.includes('/models/')) return;
        (e.response.fromDiskCache ? fromCache : fromNetwork).push(`${e.response.status} ${new URL(e.response.url).pathname}`);
      });
      await page.goto(`${demo.live.url}/`);
      const load = await page.evaluate(async () => {
        const { LocalIndex } = await import('/sdk.js' as string);
        const local = await LocalIndex.load();
        await local.embed(['cached']);
        return local.embedderLoad();
      });
      await page.close();
      return { load, fromNetwork, fromCache };
    };
    try {
      const first = await embedIn();
      expect(first.fromNetwork).to.have.length(11);
      const second = await embedIn();
      cachedLoad = second.load;
      // The manifest (no-cache) goes to the server, by ETag; the ten immutable files do not.
      expect(second.fromNetwork.map((r) => r.split(' ')[1])).to.deep.equal(['/models/use-lite-512/manifest.json']);
      expect(second.fromCache).to.have.length(10);
    } finally {
      await context.close();
    }
  });

  it('text records and { text } queries in the page find the ids and scores LocalIndex finds in Node', async () => {
    const queries = ['a fast fox leaps over a sleepy dog', 'how can I change my password', 'the capital city of France', 'Wetter heute', 'emoji party'];
    const inPage = async (input: { texts: string[]; queries: string[] }) => {
      const { LocalIndex } = await import('/sdk.js' as string);
      const local = await LocalIndex.load();
      await local.addMany(input.texts.map((text, i) => ({ id: `t${i}`, text })));
      const out = [];
      for (const text of input.queries) out.push((await local.search({ text }, { topK: 5 })).results);
      return out;
    };
    const page = await demo.page.evaluate(inPage, { texts, queries });
    const sdk: typeof import('../../src/sdk/index.js') = await import(new URL('../../build/sdk.js', import.meta.url).href);
    const local = await sdk.LocalIndex.load();
    await local.addMany(texts.map((text, i) => ({ id: `t${i}`, text })));
    for (const [j, text] of queries.entries()) expect(page[j], text).to.deep.equal((await local.search({ text }, { topK: 5 })).results);
  });

  it('reports the first-use load and the throughput', () => {
    const figures = {
      filesMs: Math.round(run.load.filesMs),
      loadMs: Math.round(run.load.ms),
      cachedLoadMs: cachedLoad && Math.round(cachedLoad.ms),
      firstCallMs: Math.round(run.firstCallMs),
      bytes: run.load.bytes,
      batchTextsPerSec: Math.round(run.batchTextsPerSec),
      singleTextsPerSec: Math.round(run.singleTextsPerSec),
    };
    console.log(`      page (Chromium, one thread): ${JSON.stringify(figures)}`);
    writeFileSync(new URL('embed.json', OUTPUT_DIR), JSON.stringify(figures, null, 2));
    expect(run.load.bytes).to.be.greaterThan(28e6);
    expect(run.load.from).to.equal(`${demo.live.url}/models/use-lite-512/manifest.json`);
  });
});
