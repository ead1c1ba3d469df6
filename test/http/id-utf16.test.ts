// Ids are well-formed UTF-16: an id with a lone surrogate (only a JSON escape
// can send one) is 400 VALIDATION_ERROR on every route that takes an id, and
// nothing is stored. The log writes UTF-8, where a lone surrogate becomes
// U+FFFD, so two such ids would become one after a restart.
import { expect } from 'chai';
import { readVectorBody } from '../../src/http/body/vector-reader.js';
import { startApp, type LiveApp } from '../helpers/live-app.js';

const NDJSON = { 'content-type': 'application/x-ndjson' };
/** Lone surrogates, high and low, at the start, middle and end; and a pair reversed (two lone halves). */
const LONE = ['\ud800', 'a\udfff', 'x\ud83dy', '\ude00\ud83d', 'ok\udbff'];
/** Well-formed: a pair (one astral code point) and plain text. */
const PAIRED = ['\ud83d\ude00', 'a\u{10ffff}b'];

describe('ids must be well-formed UTF-16', () => {
  let live: LiveApp;
  let token: string;

  before(async () => {
    live = await startApp();
    token = await live.newToken();
    const res = await live.send('POST', '/vectors/add', { token, body: { id: 'ref', vector: [1, 2] } });
    expect(res.status).to.equal(200);
  });
  after(() => live.close());

  async function count(): Promise<number> {
    const res = await live.send('POST', '/vectors/count', { token, body: {} });
    return res.body.count;
  }

  async function expectRefused(path: string, body: unknown, pointer: string) {
    const before = await count();
    const res = await live.send('POST', path, { token, body });
    expect(res.status, `${path} ${JSON.stringify(res.body)}`).to.equal(400);
    expect(res.body.error.code).to.equal('VALIDATION_ERROR');
    expect(res.body.error.details.issues.map((i: { path: string }) => i.path)).to.include(pointer);
    expect(await count(), `${path} stored something`).to.equal(before);
  }

  it('refuses a lone surrogate in the id of every route that takes one', async () => {
    for (const id of LONE) {
      await expectRefused('/vectors/add', { id, vector: [1, 2] }, '/id');
      await expectRefused(
        '/vectors/add-many',
        {
          vectors: [
            { id: 'fine', vector: [1, 2] },
            { id, vector: [2, 1] },
          ],
        },
        '/vectors/1/id',
      );
      await expectRefused('/vectors/get', { id }, '/id');
      await expectRefused('/vectors/has', { id }, '/id');
      await expectRefused('/vectors/delete', { id }, '/id');
      await expectRefused('/vectors/get-many', { ids: ['ref', id] }, '/ids/1');
      await expectRefused('/vectors/delete-many', { ids: ['ref', id] }, '/ids/1');
      await expectRefused('/vectors/metadata/get', { id }, '/id');
      await expectRefused('/vectors/metadata/set', { id, metadata: {} }, '/id');
      await expectRefused('/vectors/metadata/patch', { id, patch: {} }, '/id');
      await expectRefused('/vectors/metadata/delete', { id }, '/id');
      await expectRefused('/search', { queryId: id }, '/queryId');
    }
  });

  it('refuses an import line whose id has a lone surrogate, importing nothing', async () => {
    const header = { format: 'tempvec-export', version: 1, dimensions: 2, metric: 'cosine', vectorType: 'float32', count: 2 };
    const text = [header, { id: 'fine', vector: [1, 2] }, { id: 'b\udc00', vector: [2, 1] }].map((r) => JSON.stringify(r)).join('\n');
    expect(text).to.include('\\udc00');
    const res = await live.send('POST', '/vectors/import', { token, raw: text, headers: NDJSON });
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(res.body.error.code).to.equal('VALIDATION_ERROR');
    expect(await count()).to.equal(1);
  });

  it('takes ids with surrogate pairs, each its own id', async () => {
    for (const id of PAIRED) {
      expect((await live.send('POST', '/vectors/add', { token, body: { id, vector: [1, 3] } })).status).to.equal(200);
      const got = await live.send('POST', '/vectors/get', { token, body: { id } });
      expect(got.body.vector.id).to.equal(id);
    }
    const many = await live.send('POST', '/vectors/add-many', { token, body: { vectors: [{ id: '\ud83d\ude01', vector: [3, 1] }] } });
    expect(many.status).to.equal(200);
    expect(await count()).to.equal(1 + PAIRED.length + 1);
  });

  it('the fast vector reader declines a batch with such an id (the schema then refuses it)', () => {
    const body = (id: string) =>
      Buffer.from(
        JSON.stringify({
          vectors: [
            { id: 'a', vector: [1, 2] },
            { id, vector: [1, 2] },
          ],
        }),
      );
    expect(readVectorBody(body('b'))).to.not.equal(undefined);
    expect(readVectorBody(body('\ud800'))).to.equal(undefined);
    expect(readVectorBody(body('\ud83d\ude00'))).to.not.equal(undefined);
  });
});
