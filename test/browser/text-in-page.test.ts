// Keyword and hybrid search in a real page (Chromium): the SDK's analyzer
// makes the same terms as Node's for text that tests segmentation, and the
// page's LocalIndex answers keyword and hybrid searches with the server's
// ids, scores and order, over the same random corpus.
import { expect } from 'chai';
import { analyze } from '../../src/index/text/analyzer.js';
import { withDemoPage } from '../helpers/browser.js';

/** Text where segmentation, normalisation and folding could differ between engines. */
const SAMPLES = [
  'The quick brown fox jumps over the lazy dog.',
  '東京都の天気は晴れです。北京大学。서울특별시 날씨',
  'café naïve résumé Ünïcödé Ångström façade coöperate',
  'e\u0301 combining marks: a\u0300 o\u0308 n\u0303',
  'emoji 👩‍💻 and 🇫🇷 flags 😀😀 ok',
  'Mixed: Москва Αθήνα القاهرة Tel-Aviv ภาษาไทยง่าย',
  "state-of-the-art don't rock'n'roll O'Neil e-mail",
  'numbers 3.14 1,000,000 2026-11-26 v1.2.3 ISBN 978-3-16-148410-0 SKU-4711',
  'ＦＵＬＬＷＩＤＴＨ ｶﾀｶﾅ ﬁ ligature Ⅻ ² ß STRASSE İstanbul',
  'running runners ran easily fairly generously the and of',
];

describe('keyword and hybrid search in the page (Chromium)', function () {
  this.timeout(60_000);
  const demo = withDemoPage();

  it('makes the same terms as Node for every analyzer', async () => {
    const inPage = await demo.page.evaluate(async (samples) => {
      const { analyzeText } = await import('/sdk.js' as string);
      return ['standard', 'english'].map((name) => samples.map((text) => analyzeText(name, text)));
    }, SAMPLES);
    const inNode = (['standard', 'english'] as const).map((name) => SAMPLES.map((text) => analyze(name, text)));
    expect(inPage).to.deep.equal(inNode);
    expect(inNode[0].every((terms) => terms.length > 0)).to.equal(true);
  });

  it("LocalIndex answers keyword and hybrid searches with the server's ids, scores and order", async () => {
    const out = await demo.page.evaluate(async () => {
      const { TempvecClient, LocalIndex } = await import('/sdk.js' as string);
      let seed = 11;
      const rand = () => {
        seed = (seed * 1664525 + 1013904223) >>> 0;
        return seed / 2 ** 32;
      };
      const words = Array.from({ length: 60 }, (_, w) => `w${w}`);
      const textOf = () => Array.from({ length: 5 + Math.floor(rand() * 30) }, () => words[Math.floor(rand() * rand() * words.length)]).join(' ');
      const points = Array.from({ length: 800 }, (_, i) => ({
        id: `p${i}`,
        vector: Float32Array.from({ length: 16 }, () => rand() - 0.5),
        metadata: { g: i % 3 },
        ...(i % 10 === 9 ? {} : { text: textOf() }),
      }));
      const client = new TempvecClient();
      const local = await LocalIndex.load();
      for (let i = 0; i < points.length; i += 400) {
        await client.addMany(points.slice(i, i + 400), { analyzer: 'english' });
        local.addMany(points.slice(i, i + 400), { analyzer: 'english' });
      }
      await client.deleteMany(['p1', 'p2', 'p500']);
      local.delete(['p1', 'p2', 'p500']);
      const vector = Float32Array.from({ length: 16 }, () => rand() - 0.5);
      const runs: unknown[][] = [];
      for (const text of ['w1 w7 w30', 'w0', 'w59 w58']) {
        for (const options of [
          { topK: 20, includeText: true },
          { topK: 30, filter: { g: 1 } },
        ]) {
          runs.push([(await client.searchText(text, options)).results, local.searchText(text, options).results]);
          for (const fusion of [{ method: 'rrf' }, { method: 'linear', alpha: 0.3 }]) {
            runs.push([(await client.search(vector, { ...options, text, fusion })).results, local.search(vector, { ...options, text, fusion }).results]);
          }
        }
      }
      return { runs, analyzer: local.config.analyzer };
    });
    expect(out.analyzer).to.equal('english');
    for (const [server, mine] of out.runs) {
      expect(server).to.not.deep.equal([]);
      expect(mine).to.deep.equal(server);
    }
  });
});
