// The demo page's text mode in headless Chromium: it loads the README and docs
// sample (GET /demo/passages.json), stores it by text in the server's session
// and in the page's LocalIndex, searches by meaning, keywords and both, and
// the two lists have the same ids (and the page says they agree). A screenshot
// is saved to test-output/browser/, and to docs/demo-text.png (the README's)
// with DEMO_SCREENSHOT=1.
import { expect } from 'chai';
import { readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { OUTPUT_DIR, withDemoPage } from '../helpers/browser.js';

const DOCS_SCREENSHOT = new URL('../../docs/demo-text.png', import.meta.url);
const PASSAGES = JSON.parse(readFileSync(new URL('../../build/demo-passages.json', import.meta.url), 'utf8')) as { id: string; text: string }[];

interface Hit {
  id: string;
  score: number;
}

describe('demo page, real text (Chromium)', function () {
  this.timeout(180_000);
  let now = Date.now();
  const demo = withDemoPage({ now: () => now });
  const settled = () => demo.page.waitForFunction(() => document.body.dataset.state !== 'busy', undefined, { timeout: 150_000 });
  async function click(id: string) {
    await demo.page.click(`#${id}`);
    await settled();
    expect(await demo.page.getAttribute('body', 'data-state'), `after #${id}: ${await demo.page.textContent('#status')}`).to.equal('ready');
  }
  const last = () => demo.page.evaluate(() => (window as any).tempvecDemo.text.last as { server: Hit[]; mine: Hit[]; agree: boolean });
  const cells = (table: string) => demo.page.$$eval(`#${table} tbody tr`, (trs) => trs.map((tr) => [...tr.children].map((td) => td.textContent ?? '')));

  it("loads the README and docs sample into the server's session and the page's index, by text", async () => {
    expect(PASSAGES.length).to.be.within(100, 400);
    await click('token');
    await click('text-load');
    expect(await demo.page.textContent('#text-load-info')).to.match(new RegExp(`^${PASSAGES.length} passages of the README and docs embedded and stored`));
    const session = await demo.page.evaluate(() => (window as any).tempvecDemo.text.client.getSession());
    expect(session.session.vectorCount).to.equal(PASSAGES.length);
    expect(session.session.config.embedding).to.equal('use-lite-512');
    expect(await demo.page.evaluate(() => (window as any).tempvecDemo.text.local.count())).to.equal(PASSAGES.length);
  });

  it('searches by meaning: the same ids from the server and the page, and the page says they agree', async () => {
    await demo.page.fill('#text-query', 'what happens to my data when the server restarts');
    await click('text-search');
    const { server, mine, agree } = await last();
    expect(server).to.have.length(5);
    expect(mine.map((h) => h.id)).to.deep.equal(server.map((h) => h.id));
    for (const [i, h] of server.entries()) expect(Math.abs(h.score - mine[i].score), h.id).to.be.at.most(1e-5);
    expect(agree).to.equal(true);
    expect(await demo.page.textContent('#text-agree')).to.match(/^Server and page agree/);
    // The tables show each hit's passage text, the server's beside the page's.
    const rows = await cells('text-server');
    expect(rows.map((r) => r[2].startsWith(PASSAGES.find((p) => p.id === server[rows.indexOf(r)].id)!.text))).to.not.include(false);
    expect(await cells('text-local')).to.deep.equal(rows);
    // By meaning: the best passage is about reopening the log after a restart (found with the Node encoder over the same passages).
    expect(rows[0][2], rows.map((r) => r[2]).join('\n')).to.match(/restart/i);
    // The text section only: the point sample above it is the other screenshot's.
    const png = await demo.page.locator('.text-mode').screenshot({ path: new URL('demo-text.png', OUTPUT_DIR).pathname });
    if (process.env.DEMO_SCREENSHOT === '1') await writeFile(DOCS_SCREENSHOT, png);
  });

  it('searches by keywords and by both, and the page agrees with the server', async () => {
    for (const mode of ['keywords', 'both']) {
      await demo.page.selectOption('#text-mode', mode);
      await demo.page.fill('#text-query', 'export a session as NDJSON');
      await click('text-search');
      const { server, mine, agree } = await last();
      expect(server.length, mode).to.be.greaterThan(0);
      expect(
        mine.map((h) => h.id),
        mode,
      ).to.deep.equal(server.map((h) => h.id));
      expect(agree, mode).to.equal(true);
    }
    await demo.page.selectOption('#text-mode', 'meaning');
  });

  it('splits pasted text into sentences and searches it by meaning', async () => {
    await demo.page.selectOption('#text-source', 'paste');
    await demo.page.selectOption('#text-split', 'sentences');
    await demo.page.fill(
      '#text-paste',
      'The cat slept on the warm windowsill. Stock markets fell sharply after the announcement. The recipe needs two cups of flour and an egg. Our team won the football match in extra time!',
    );
    await click('text-load');
    expect(await demo.page.textContent('#text-load-info')).to.match(/^4 sentences of your text embedded/);
    await demo.page.fill('#text-query', 'baking a cake');
    await click('text-search');
    const { server, mine, agree } = await last();
    expect(server[0].id).to.equal('sent-3');
    expect(mine.map((h) => h.id)).to.deep.equal(server.map((h) => h.id));
    expect(agree).to.equal(true);
  });

  it('had no console errors or CSP violations', () => {
    expect(demo.errors).to.deep.equal([]);
  });

  it('says so when the text session expired, and a new token loads the text into a new one', async () => {
    now += demo.live.config.sessionTtlMs + 1;
    await demo.page.click('#text-search');
    await settled();
    expect(await demo.page.getAttribute('body', 'data-state')).to.equal('error');
    expect(await demo.page.textContent('#status')).to.match(/session expired.*get a new token/i);
    expect(await demo.page.isDisabled('#text-search')).to.equal(true);
    await click('token');
    await click('text-load');
    await click('text-search');
    const { server, agree } = await last();
    expect(server[0].id).to.equal('sent-3');
    expect(agree).to.equal(true);
  });
});
