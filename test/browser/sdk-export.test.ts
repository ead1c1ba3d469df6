// In Chromium: a page pulls a server session into a LocalIndex with
// LocalIndex.fromExport (a streamed fetch Response) and gets the server's
// ids and scores offline; the page's export goes back into a new session.
import { expect } from 'chai';
import { withDemoPage } from '../helpers/browser.js';

describe('SDK export and import in the browser (Chromium)', function () {
  this.timeout(60_000);
  const demo = withDemoPage();

  it("fromExport gives the page the server's ids and scores, and its export goes back", async () => {
    const out = await demo.page.evaluate(async () => {
      const { TempvecClient, LocalIndex } = await import('/sdk.js' as string);
      let seed = 11;
      const rand = () => {
        seed = (seed * 1664525 + 1013904223) >>> 0;
        return seed / 2 ** 32 - 0.5;
      };
      const points = Array.from({ length: 1200 }, (_, i) => ({
        id: `p${i}`,
        vector: Float32Array.from({ length: 32 }, () => rand() + (i % 4)),
        metadata: { cluster: i % 4 },
      }));
      const client = new TempvecClient();
      for (let i = 0; i < points.length; i += 400) await client.addMany(points.slice(i, i + 400), { metric: 'cosine' });
      await client.deleteByFilter({ cluster: 2 });
      const local = await LocalIndex.fromExport(await client.exportVectors({ vectorEncoding: 'base64' }));
      const queries = Array.from({ length: 6 }, () => Float32Array.from({ length: 32 }, () => rand() + 1));
      const runs = [];
      for (const options of [{ topK: 20 }, { topK: 40, filter: { cluster: 3 } }]) {
        runs.push({ server: (await client.searchMany(queries, options)).results, mine: local.searchMany(queries, options).results });
      }
      const byId = { server: (await client.searchById('p5', { topK: 10 })).results, mine: local.searchById('p5', { topK: 10 }).results };
      const back = new TempvecClient();
      const imported = (await back.importVectors(local)).mutation;
      const same = (await back.exportText({ vectorEncoding: 'base64' })) === (await client.exportText({ vectorEncoding: 'base64' }));
      return { size: local.size, kernelSource: local.kernelSource, runs, byId, imported, same };
    });
    expect(out.size).to.equal(900);
    expect(out.kernelSource).to.equal('instantiateStreaming');
    for (const { server, mine } of [...out.runs, { server: [out.byId.server], mine: [out.byId.mine] }]) {
      expect(mine).to.deep.equal(server);
      expect(mine[0].length).to.be.greaterThan(0);
    }
    expect(out.imported).to.deep.equal({ added: 900, replaced: 0 });
    expect(out.same).to.equal(true);
  });
});
