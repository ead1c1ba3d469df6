// The SDK's export and import: a server session moved into a LocalIndex
// (client.exportTo, LocalIndex.fromExport) answers with the server's ids and
// scores, and a LocalIndex's export imported into a new session gives the
// same vectors; LocalIndex's count, list, patch and delete by filter agree
// with the server's routes.
import { expect } from 'chai';
import { startApp, type LiveApp } from '../helpers/live-app.js';

type Sdk = typeof import('../../src/sdk/index.js');
const bundle = new URL('../../build/sdk.js', import.meta.url).href;

function dataset(n: number, dim: number, seed: number) {
  let s = seed;
  const rand = () => {
    s = (s * 1664525 + 1013904223) >>> 0;
    return s / 2 ** 32 - 0.5;
  };
  return Array.from({ length: n }, (_, i) => ({
    id: `p${i}`,
    vector: new Float32Array(Array.from({ length: dim }, () => rand() * 3)),
    metadata: { cluster: i % 4, tags: i % 2 ? ['odd'] : [] },
  }));
}

describe('SDK export and import (in Node, from the bundle)', () => {
  let live: LiveApp;
  let sdk: Sdk;

  before(async () => {
    live = await startApp({ tokenRatePerMin: 0, requestRatePerSec: 0 });
    sdk = await import(bundle);
  });
  after(() => live.close());

  for (const [metric, vectorType] of [
    ['cosine', 'float32'],
    ['l2', 'int8'],
  ] as const) {
    it(`exportTo and fromExport give a LocalIndex with the server's ids and scores (${metric}, ${vectorType})`, async () => {
      const points = dataset(500, 12, metric === 'cosine' ? 3 : 5);
      const client = new sdk.TempvecClient({ baseUrl: live.url });
      for (let i = 0; i < points.length; i += 250) await client.addMany(points.slice(i, i + 250), { metric, vectorType });
      await client.deleteByFilter({ cluster: 3, tags: 'odd' });
      await client.patchMetadata('p10', { cluster: null, extra: { a: 1 } });

      const local = await sdk.LocalIndex.load();
      expect(await client.exportTo(local)).to.deep.equal({ added: 375, replaced: 0 });
      const fromNumbers = await sdk.LocalIndex.fromExport(await client.exportVectors());
      for (const index of [local, fromNumbers]) {
        expect(index.config).to.include({ metric, vectorType, dimensions: 12 });
        for (const options of [
          { topK: 10 },
          { topK: 25, filter: { cluster: 2 }, includeMetadata: true },
          { topK: 30, scoreThreshold: metric === 'cosine' ? 0.5 : 4 },
        ]) {
          const query = dataset(1, 12, 99)[0].vector;
          expect(index.search(query, options).results).to.deep.equal((await client.search(query, options)).results);
          expect(index.searchById('p12', options).results).to.deep.equal((await client.searchById('p12', options)).results);
          expect(index.searchManyByIds(['p1', 'p2'], options).results).to.deep.equal((await client.searchManyByIds(['p1', 'p2'], options)).results);
        }
        expect(index.count({ cluster: 1 })).to.equal((await client.count({ cluster: 1 })).count);
        expect(index.getMetadata('p10')).to.deep.equal({ tags: [], extra: { a: 1 } });
        const page = { limit: 7, includeVectors: true, includeMetadata: true, vectorEncoding: 'base64' as const, filter: { cluster: 0 } };
        const a = index.list(page);
        const b = await client.list(page);
        expect(a.vectors).to.deep.equal(b.vectors);
        expect(index.list({ ...page, cursor: a.nextCursor! }).vectors).to.have.length(7);
      }
    });
  }

  it("imports a LocalIndex's export into a new session, bit for bit", async () => {
    const local = await sdk.LocalIndex.load();
    local.addMany(dataset(300, 8, 7), { metric: 'l2' });
    local.deleteByFilter({ cluster: 1 });
    expect(local.patchMetadata('p2', { cluster: 9 })).to.deep.equal({ cluster: 9, tags: [] });
    const client = new sdk.TempvecClient({ baseUrl: live.url });
    expect((await client.importVectors(local)).mutation).to.deep.equal({ added: 225, replaced: 0 });
    expect(await client.exportText({ vectorEncoding: 'base64' })).to.equal(local.export());
    expect(local.export({ vectorEncoding: 'numbers' }).split('\n')[1]).to.match(/^\{"id":"p0","vector":\[/);
  });

  it("answers LocalIndex mistakes with the server's codes", async () => {
    const local = await sdk.LocalIndex.load();
    local.addMany(dataset(5, 4, 1));
    const code = async (fn: () => unknown) => {
      try {
        await fn();
      } catch (err) {
        expect(err).to.be.instanceOf(sdk.TempvecError);
        return (err as InstanceType<Sdk['TempvecError']>).code;
      }
      return 'no error';
    };
    expect(await code(() => local.list({ cursor: 'nope' }))).to.equal('INVALID_CURSOR');
    expect(await code(() => local.deleteByFilter({}))).to.equal('VALIDATION_ERROR');
    expect(await code(() => local.searchById('zz'))).to.equal('VECTOR_NOT_FOUND');
    expect(await code(() => local.patchMetadata('p1', { big: 'x'.repeat(9000) }))).to.equal('VALIDATION_ERROR');
    expect(local.patchMetadata('zz', { a: 1 })).to.equal(undefined);
    expect(
      await code(() => local.importFrom('{"format":"tempvec-export","version":1,"dimensions":4,"metric":"cosine","vectorType":"float32","count":2}\n')),
    ).to.equal('INVALID_IMPORT');
    expect(await code(() => sdk.LocalIndex.fromExport('not json\n'))).to.equal('INVALID_JSON');
    expect(local.size).to.equal(5);
  });
});
