// The demo page at GET / in headless Chromium: it loads without console
// errors, walks through token -> sample -> search, draws the plot, and the
// in-page WASM search agrees with the server. A screenshot is saved to
// test-output/browser/, and to docs/demo.png (the README's) with DEMO_SCREENSHOT=1.
import { expect } from 'chai';
import { writeFile } from 'node:fs/promises';
import { OUTPUT_DIR, withDemoPage } from '../helpers/browser.js';

const DOCS_SCREENSHOT = new URL('../../docs/demo.png', import.meta.url);

describe('demo page (Chromium)', function () {
  this.timeout(60_000);
  let now = Date.now();
  const demo = withDemoPage({ now: () => now });
  const settled = () => demo.page.waitForFunction(() => document.body.dataset.state !== 'busy');
  async function click(id: string) {
    await demo.page.click(`#${id}`);
    await settled();
    expect(await demo.page.getAttribute('body', 'data-state'), `after #${id}: ${await demo.page.textContent('#status')}`).to.equal('ready');
  }

  it('is served for Accept: text/html while API clients still get JSON', async () => {
    expect(await demo.page.title()).to.equal('tempvec demo');
    const json = await demo.live.send('GET', '/', { headers: { accept: 'application/json' } });
    expect(json.body.links.sdk).to.equal('/sdk.js');
    const plain = await demo.live.send('GET', '/');
    expect(plain.headers.get('content-type')).to.match(/^application\/json/);
  });

  it('gets a token, loads a clustered sample and shows a search as a table and a plot', async () => {
    await click('token');
    expect(await demo.page.textContent('#token-info')).to.match(/^Token .+ for session [0-9a-f-]{36}/);
    await demo.page.fill('#count', '2000');
    await click('load');
    expect(demo.live.store.memoryBytes()).to.be.greaterThan(0);
    const session = await demo.page.evaluate(() => (window as any).tempvecDemo.client.getSession());
    expect(session.session.vectorCount).to.equal(2000);

    await demo.page.fill('#query', 'p7');
    await demo.page.fill('#topk', '12');
    await demo.page.selectOption('#filter', '1');
    await click('search');
    const rows = await demo.page.$$eval('#results tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent)));
    expect(rows).to.have.length(12);
    expect(rows.every((r) => r[2] === '1')).to.equal(true);
    expect(rows[0][1]).to.equal('p7');
    expect(await demo.page.textContent('#timings')).to.match(/server search[\d.]+ ms/);

    // The plot: points drawn, and the query's neighbours ringed in red.
    const painted = await demo.page.evaluate(() => {
      const c = document.getElementById('plot') as HTMLCanvasElement;
      const data = c.getContext('2d')!.getImageData(0, 0, c.width, c.height).data;
      let any = 0,
        red = 0;
      for (let i = 0; i < data.length; i += 4) {
        if (data[i + 3] > 0) any++;
        if (data[i] === 0xd6 && data[i + 1] === 0x27 && data[i + 2] === 0x28) red++;
      }
      return { any, red };
    });
    expect(painted.any).to.be.greaterThan(2000);
    expect(painted.red).to.be.greaterThan(0);
  });

  it("runs the same search in the page's WASM kernel and shows its time and agreement", async () => {
    await demo.page.check('#local');
    await demo.page.selectOption('#filter', '');
    await demo.page.fill('#query', 'p123');
    await click('search');
    const timings = await demo.page.textContent('#timings');
    expect(timings).to.match(/local search \(WASM in page\)[\d.]+ ms/);
    expect(timings).to.include('local matches serveryes');
    const local = await demo.page.evaluate(() => (window as any).tempvecDemo.local.kernelSource);
    expect(local).to.equal('instantiateStreaming');
    // The point sample only, down to the real-text part (demo-text.test.ts takes that one).
    const text = (await demo.page.locator('.text-mode').boundingBox())!;
    const clip = { x: 0, y: 0, width: demo.page.viewportSize()!.width, height: Math.floor(text.y) - 8 };
    const png = await demo.page.screenshot({ path: new URL('demo.png', OUTPUT_DIR).pathname, fullPage: true, clip });
    expect(png.subarray(1, 4).toString('latin1')).to.equal('PNG');
    if (process.env.DEMO_SCREENSHOT === '1') await writeFile(DOCS_SCREENSHOT, png);
  });

  it('reloads the sample with int8 storage, and the page still matches the server', async () => {
    await demo.page.selectOption('#vectorType', 'int8');
    await demo.page.fill('#count', '1000');
    await click('load');
    expect(await demo.page.textContent('#load-info')).to.match(/^1000 points of 32 dimensions \(cosine, int8\)/);
    await demo.page.fill('#query', 'p5');
    await click('search');
    const timings = await demo.page.textContent('#timings');
    expect(timings).to.include('int8 codes');
    expect(timings).to.include('local matches serveryes');
  });

  it("searches by keywords and hybrid, and the page's own index answers the same", async () => {
    await demo.page.selectOption('#mode', 'keyword');
    await demo.page.fill('#text', 'banana');
    await click('search');
    const rows = await demo.page.$$eval('#results tbody tr', (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent ?? '')));
    expect(rows).to.have.length(12);
    expect(rows.every((r) => /\bbanana\b/.test(r[4]))).to.equal(true);
    expect(await demo.page.textContent('#timings')).to.include('local matches serveryes');
    expect(await demo.page.textContent('#status')).to.match(/best BM25 matches of "banana"/);

    await demo.page.selectOption('#mode', 'hybrid');
    await demo.page.fill('#query', 'p5');
    await demo.page.fill('#text', 'rocket orbit');
    await click('search');
    const hybrid = await demo.page.$$eval('#results tbody tr', (trs) => trs.map((tr) => tr.children[3].textContent ?? ''));
    expect(hybrid).to.have.length(12);
    expect(hybrid.every((score) => /\(vector #(\d+|-), keywords #(\d+|-)\)/.test(score))).to.equal(true);
    expect(await demo.page.textContent('#timings')).to.include('local matches serveryes');
    await demo.page.selectOption('#mode', 'vector');
  });

  it('had no console errors or CSP violations under its own policy', async () => {
    const res = await demo.live.send('GET', '/', { headers: { accept: 'text/html' } });
    expect(res.headers.get('content-security-policy')).to.include("frame-ancestors 'none'");
    expect(demo.errors).to.deep.equal([]);
  });

  it('says so when the session has expired, and starts no new session by itself', async () => {
    const sessions = demo.live.store.size;
    now += demo.live.config.sessionTtlMs + 1;
    await demo.page.click('#search');
    await settled();
    expect(await demo.page.getAttribute('body', 'data-state')).to.equal('error');
    expect(await demo.page.textContent('#status')).to.match(/session expired.*get a new token/i);
    expect(await demo.page.isDisabled('#search')).to.equal(true);
    expect(demo.live.store.size).to.be.at.most(sessions);
  });
});
