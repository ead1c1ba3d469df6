// LocalIndex in Chromium on either kernel build: it runs the build the server
// serves at /kernel.wasm and reports it (backend); where the engine lacks
// relaxed SIMD (emulated here: Chromium has it) it falls back to
// /kernel.simd128.wasm. Across builds, ids are the server's and scores within
// BUILDS_SCORE_BOUND; within one build, the server's scores bit for bit.
import { readFileSync } from 'node:fs';
import { expect } from 'chai';
import type { Browser, Page } from 'playwright-core';
import type { KernelBuild } from '../../src/config.js';
import { relaxedSimdSupported } from '../../src/kernel/relaxed-simd.js';
import { launchChromium, openPage } from '../helpers/browser.js';
import { startApp, type LiveApp } from '../helpers/live-app.js';
import { BUILDS_SCORE_BOUND } from '../helpers/reference.js';

const RELAXED_BYTES = readFileSync(new URL('../../build/kernel.relaxed.wasm', import.meta.url));

/**
 * Make the page's engine refuse relaxed SIMD, as Safari's does: the feature
 * probe fails to validate, and compiling a kernel whose RELAXED_SIMD is 1 is a
 * CompileError.
 */
async function withoutRelaxedSimd(page: Page): Promise<void> {
  await page.evaluate(() => {
    const wasm = WebAssembly as unknown as Record<string, (...args: unknown[]) => unknown>;
    const relaxedOpcode = (bytes: Uint8Array) => bytes.some((b, i) => b === 0xfd && bytes[i + 1] >= 0x80 && bytes[i + 1] <= 0x93 && bytes[i + 2] === 0x02);
    const validate = wasm.validate;
    wasm.validate = (bytes) =>
      !relaxedOpcode(new Uint8Array(ArrayBuffer.isView(bytes) ? bytes.buffer : (bytes as ArrayBuffer))) && (validate(bytes) as boolean);
    const relaxed = (module: WebAssembly.Module) =>
      (new WebAssembly.Instance(module, { env: { memory: new WebAssembly.Memory({ initial: 1 }) } }).exports.RELAXED_SIMD as WebAssembly.Global | undefined)
        ?.value === 1;
    const refuse = (module: WebAssembly.Module) => {
      if (relaxed(module)) throw new WebAssembly.CompileError('relaxed SIMD is not supported here (emulated)');
    };
    for (const name of ['compile', 'compileStreaming'] as const) {
      const original = wasm[name];
      wasm[name] = async (...args) => {
        const module = (await original(...args)) as WebAssembly.Module;
        refuse(module);
        return module;
      };
    }
    const instantiateStreaming = wasm.instantiateStreaming;
    wasm.instantiateStreaming = async (...args) => {
      const result = (await instantiateStreaming(...args)) as WebAssembly.WebAssemblyInstantiatedSource;
      refuse(result.module);
      return result;
    };
  });
}

/** The same data in the server and in a LocalIndex: both answers of 8 queries, the backends, and the kernel files the page fetched. */
async function compare(page: Page, metric: string) {
  const fetched: string[] = [];
  page.on('request', (request) => {
    if (request.url().includes('/kernel')) fetched.push(new URL(request.url()).pathname);
  });
  const out = await page.evaluate(async (metric) => {
    const { TempvecClient, LocalIndex } = await import('/sdk.js' as string);
    let seed = 17;
    const rand = () => {
      seed = (seed * 1664525 + 1013904223) >>> 0;
      return seed / 2 ** 32 - 0.5;
    };
    // 102 dims: 4-float chunks and a scalar tail; 1500 rows, 8 queries (two query tiles).
    const points = Array.from({ length: 1500 }, (_, i) => ({ id: `p${i}`, vector: Float32Array.from({ length: 102 }, () => rand() + (i % 5)) }));
    const queries = Array.from({ length: 8 }, () => Float32Array.from({ length: 102 }, () => rand() + 2));
    const client = new TempvecClient();
    for (let i = 0; i < points.length; i += 500) await client.addMany(points.slice(i, i + 500), { metric });
    const local = await LocalIndex.load();
    for (let i = 0; i < points.length; i += 500) local.addMany(points.slice(i, i + 500), { metric });
    const server = (await client.searchMany(queries, { topK: 20 })).results;
    const mine = local.searchMany(queries, { topK: 20 }).results;
    const session = (await client.getSession()).session;
    return { server, mine, backend: local.backend, configBackend: local.config.backend, serverBackend: session.config.backend, source: local.kernelSource };
  }, metric);
  let largest = 0;
  let identical = true;
  out.mine.forEach((hits: { id: string; score: number }[], j: number) => {
    expect(
      hits.map((h) => h.id),
      `query ${j}`,
    ).to.deep.equal(out.server[j].map((h: { id: string }) => h.id));
    hits.forEach((h, i) => {
      const theirs = out.server[j][i].score;
      largest = Math.max(largest, Math.abs(h.score - theirs) / Math.max(1, Math.abs(theirs)));
      identical &&= h.score === theirs;
    });
  });
  expect(out.configBackend).to.equal(out.backend);
  expect(out.source).to.equal('instantiateStreaming');
  return { ...out, fetched, largest, identical };
}

describe('LocalIndex on either kernel build (Chromium)', function () {
  this.timeout(90_000);
  let browser: Browser;
  before(async () => {
    browser = await launchChromium();
  });
  after(() => browser?.close());

  const start = (kernelBuild: KernelBuild) => startApp({ kernelBuild, tokenRatePerMin: 0, requestRatePerSec: 0 });
  const open = (live: LiveApp) => openPage(browser, `${live.url}/`);

  describe('the server on simd128', () => {
    const state = {} as { live: LiveApp };
    before(async () => {
      state.live = await start('simd128');
    });
    after(() => state.live?.close());

    it("the page runs the simd128 build the server serves: the server's ids and scores, bit for bit", async () => {
      const { page } = await open(state.live);
      for (const metric of ['cosine', 'l2']) {
        const out = await compare(page, metric);
        expect([out.backend, out.serverBackend]).to.deep.equal(['wasm-simd128', 'wasm-simd128']);
        expect(out.identical, `largest difference ${out.largest}`).to.equal(true);
      }
    });

    it("a page given the relaxed build runs it: the server's ids, scores within the bound", async () => {
      const { page } = await open(state.live);
      await page.route('**/kernel.wasm', (route) => route.fulfill({ status: 200, contentType: 'application/wasm', body: RELAXED_BYTES }));
      for (const metric of ['cosine', 'l2']) {
        const out = await compare(page, metric);
        expect([out.backend, out.serverBackend]).to.deep.equal(['wasm-relaxed-simd', 'wasm-simd128']);
        expect(out.largest).to.be.at.most(BUILDS_SCORE_BOUND);
      }
    });

    it('a page whose engine lacks relaxed SIMD, given the relaxed build, falls back to /kernel.simd128.wasm', async () => {
      const { page } = await open(state.live);
      await page.route('**/kernel.wasm', (route) => route.fulfill({ status: 200, contentType: 'application/wasm', body: RELAXED_BYTES }));
      await withoutRelaxedSimd(page);
      const out = await compare(page, 'cosine');
      expect(out.backend).to.equal('wasm-simd128');
      expect(out.fetched).to.deep.equal(['/kernel.wasm', '/kernel.simd128.wasm']);
      expect(out.identical, `largest difference ${out.largest}`).to.equal(true);
    });
  });

  describe(`the server on relaxed${relaxedSimdSupported() ? '' : ` (skipped: Node ${process.version} does not run relaxed SIMD)`}`, () => {
    const state = {} as { live: LiveApp };
    before(async function () {
      if (!relaxedSimdSupported()) this.skip();
      state.live = await start('relaxed');
    });
    after(() => state.live?.close());

    it("the page runs the relaxed build the server serves: the server's ids and scores, bit for bit", async () => {
      const { page } = await open(state.live);
      for (const metric of ['cosine', 'l2']) {
        const out = await compare(page, metric);
        expect([out.backend, out.serverBackend]).to.deep.equal(['wasm-relaxed-simd', 'wasm-relaxed-simd']);
        expect(out.fetched).to.deep.equal(['/kernel.wasm']);
        expect(out.identical, `largest difference ${out.largest}`).to.equal(true);
      }
    });

    it("a page whose engine lacks relaxed SIMD falls back to the simd128 build: the server's ids, scores within the bound", async () => {
      const { page } = await open(state.live);
      await withoutRelaxedSimd(page);
      for (const metric of ['cosine', 'l2']) {
        const out = await compare(page, metric);
        expect([out.backend, out.serverBackend]).to.deep.equal(['wasm-simd128', 'wasm-relaxed-simd']);
        expect(out.largest).to.be.at.most(BUILDS_SCORE_BOUND);
      }
    });
  });
});
