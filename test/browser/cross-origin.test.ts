// A developer's own page on another origin (another port) imports the
// hosted SDK in Chromium: the whole client flow, Server-Timing and error
// headers readable, and LocalIndex streaming kernel.wasm from the service.
// With CORS_ORIGINS set, the browser refuses an origin not on the list.
import { expect } from 'chai';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { Browser } from 'playwright-core';
import { launchChromium, openPage } from '../helpers/browser.js';
import { startApp, type LiveApp } from '../helpers/live-app.js';

/** A server of blank pages on its own loopback port: the third-party origin. */
async function startPageServer(): Promise<{ server: Server; port: number }> {
  const server = createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/html; charset=utf-8' });
    res.end("<!doctype html><title>someone else's page</title>");
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { server, port: (server.address() as AddressInfo).port };
}

describe('SDK from a page on another origin (Chromium)', function () {
  this.timeout(60_000);
  let browser: Browser;
  let pages: Awaited<ReturnType<typeof startPageServer>>;
  let open: LiveApp;
  let listed: LiveApp;
  before(async () => {
    pages = await startPageServer();
    // Three tokens a minute: the fourth answers 429 with Retry-After.
    open = await startApp({ tokenRatePerMin: 3 });
    listed = await startApp({ tokenRatePerMin: 0, corsOrigins: `http://127.0.0.1:${pages.port}` });
    browser = await launchChromium();
  });
  after(async () => {
    await browser?.close();
    await open?.close();
    await listed?.close();
    pages?.server.close();
  });

  it('imports /sdk.js, adds, searches, reads timings and errors, runs LocalIndex', async () => {
    const { page } = await openPage(browser, `http://127.0.0.1:${pages.port}/`);
    const out = await page.evaluate(async (service) => {
      const { TempvecClient, TempvecError, LocalIndex } = (await import(`${service}/sdk.js`)) as typeof import('../../src/sdk/index.js');
      const client = new TempvecClient();
      const log: Record<string, unknown> = { origin: location.origin, baseUrl: client.baseUrl };
      await client.createToken();
      const points = [
        { id: 'a', vector: new Float32Array([1, 0, 0, 0]), metadata: { tag: 'x' } },
        { id: 'b', vector: [0, 1, 0, 0], metadata: { tag: 'y' } },
        { id: 'c', vector: [0.9, 0.1, 0, 0], metadata: { tag: 'x' } },
      ];
      log.added = (await client.addMany(points)).mutation;
      const found = await client.search([1, 0.2, 0, 0], { topK: 3, filter: { tag: 'x' } });
      log.search = found.results.map((h: { id: string }) => h.id);
      log.metricsKeys = Object.keys(found.metrics).sort();
      // The same timings as a header, read by the page itself and by the Resource Timing API.
      const raw = await fetch(`${service}/search`, {
        method: 'POST',
        headers: { authorization: `Bearer ${client.token}`, 'content-type': 'application/json' },
        body: JSON.stringify({ queryVector: [0, 1, 0, 0], topK: 1 }),
      });
      log.serverTiming = raw.headers.get('server-timing');
      const entries = performance.getEntriesByType('resource') as PerformanceResourceTiming[];
      log.resourceTiming = entries.filter((e) => e.name === `${service}/search`).flatMap((e) => e.serverTiming.map((s) => s.name));
      try {
        await client.search([1, 0]);
      } catch (e) {
        log.error = e instanceof TempvecError ? `${e.status} ${e.code}` : String(e);
      }
      let retryAfter: string | null = null;
      for (let i = 0; i < 5 && retryAfter === null; i++) {
        const res = await fetch(`${service}/token`, { method: 'POST' });
        if (res.status === 429) retryAfter = res.headers.get('retry-after');
      }
      log.retryAfter = retryAfter;
      const local = await LocalIndex.load();
      local.addMany(points);
      log.kernelSource = local.kernelSource;
      log.localSearch = local.search([1, 0.2, 0, 0], { topK: 3, filter: { tag: 'x' } }).results.map((h: { id: string }) => h.id);
      return log;
    }, open.url);
    expect(out).to.deep.include({
      origin: `http://127.0.0.1:${pages.port}`,
      baseUrl: open.url,
      added: { added: 3, replaced: 0 },
      search: ['c', 'a'],
      error: '400 DIMENSION_MISMATCH',
      kernelSource: 'instantiateStreaming',
      localSearch: ['c', 'a'],
    });
    expect(out.origin).to.not.equal(new URL(open.url).origin);
    expect(out.metricsKeys).to.include('requestLatencyMs');
    expect(out.serverTiming).to.match(/requestLatency;dur=[\d.]+/);
    expect(out.resourceTiming).to.include('requestLatency');
    expect(Number(out.retryAfter)).to.be.at.least(1);
  });

  it('with CORS_ORIGINS set, serves a listed origin and the browser refuses another', async () => {
    // Runs in the page: the service URL is its argument (page.evaluate sends no closures).
    const run = async (service: string): Promise<Record<string, string>> => {
      const log: Record<string, string> = {};
      try {
        const { TempvecClient } = await import(`${service}/sdk.js`);
        log.token = typeof (await new TempvecClient().createToken()).token;
      } catch (e) {
        log.import = String(e);
      }
      try {
        log.limits = (await (await fetch(`${service}/limits`)).json()).limits.corsOrigins.join(',');
      } catch (e) {
        log.fetch = String(e);
      }
      return log;
    };
    const allowed = await openPage(browser, `http://127.0.0.1:${pages.port}/`);
    expect(await allowed.page.evaluate(run, listed.url)).to.deep.equal({ token: 'string', limits: `http://127.0.0.1:${pages.port}` });
    // The same page server under another host name: another origin, not on the list.
    const refused = await openPage(browser, `http://localhost:${pages.port}/`);
    const out = await refused.page.evaluate(run, listed.url);
    expect(out.import).to.match(/Failed to fetch dynamically imported module/);
    expect(out.fetch).to.match(/TypeError: Failed to fetch/);
    expect(refused.errors.join('\n')).to.match(/blocked by CORS policy/);
  });
});
