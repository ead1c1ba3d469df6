// Request limits: body size (413); nesting depth, key counts, id length and
// metadata size (400 with the path of the offending field).
import { expect } from 'chai';
import { firstTooDeep } from '../../src/schemas/json-shape.js';
import { startApp, type LiveApp } from '../helpers/live-app.js';

function nested(levels: number): Record<string, unknown> {
  let value: Record<string, unknown> = { leaf: 1 };
  for (let i = 1; i < levels; i++) value = { k: value };
  return value;
}
const keys = (n: number) => Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}`, i]));

describe('request limits', () => {
  let live: LiveApp;
  let token: string;

  before(async () => {
    live = await startApp({ maxJsonDepth: 4, maxMetadataKeys: 10, maxFilterKeys: 3, maxIdLength: 8, maxMetadataBytes: 200, maxBodyBytes: 4096 });
    token = await live.newToken();
    await live.send('POST', '/vectors/add', { token, body: { id: 'ref', vector: [1, 2] } });
  });
  after(() => live.close());

  async function expect400(path: string, body: unknown, pointer: string) {
    const res = await live.send('POST', path, { token, body });
    expect(res.status, JSON.stringify(res.body)).to.equal(400);
    expect(res.body.error.code).to.equal('VALIDATION_ERROR');
    expect(res.body.error.details.issues.map((i: { path: string }) => i.path)).to.include(pointer);
    return res;
  }

  it('takes metadata exactly at the depth and key limits', async () => {
    const res = await live.send('POST', '/vectors/add', { token, body: { id: 'd', vector: [1, 1], metadata: nested(4) } });
    expect(res.status).to.equal(200);
    expect((await live.send('POST', '/vectors/metadata/set', { token, body: { id: 'd', metadata: keys(10) } })).status).to.equal(200);
  });

  it('refuses metadata nested too deep with the path of the first too-deep value', async () => {
    await expect400('/vectors/add', { id: 'x', vector: [1, 1], metadata: nested(5) }, '/metadata/k/k/k/k');
    await expect400(
      '/vectors/add-many',
      {
        vectors: [
          { id: 'x', vector: [1, 1] },
          { id: 'y', vector: [1, 1], metadata: nested(5) },
        ],
      },
      '/vectors/1/metadata/k/k/k/k',
    );
    await expect400('/vectors/metadata/set', { id: 'ref', metadata: { list: [[[[1]]]] } }, '/metadata/list/0/0/0');
  });

  it('refuses a body whose brackets nest far past the limit at the path the parsed body would give (scanned before parsing)', async () => {
    const deep = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;
    const text = `{"id":"x","vector":[1,1],"metadata":{"b":1,"a":${deep(1900)}}}`;
    const expected = `/${firstTooDeep(JSON.parse(text), 7)!.join('/')}`;
    expect(expected).to.equal('/metadata/a/0/0/0/0/0');
    for (const path of ['/vectors/add', '/vectors/metadata/set']) {
      const res = await live.send('POST', path, { token, raw: text });
      expect(res.status, JSON.stringify(res.body)).to.equal(400);
      expect(res.body.error.code).to.equal('VALIDATION_ERROR');
      expect(res.body.error.details.issues.map((i: { path: string }) => i.path)).to.deep.equal([expected]);
    }
  });

  it('refuses metadata with too many keys, nested ones included, naming the object', async () => {
    await expect400('/vectors/add', { id: 'x', vector: [1, 1], metadata: keys(11) }, '/metadata');
    await expect400('/vectors/metadata/set', { id: 'ref', metadata: { ...keys(5), inner: keys(5) } }, '/metadata/inner');
  });

  it('refuses filters nested too deep or with too many keys', async () => {
    await expect400('/search', { queryVector: [1, 1], filter: nested(5) }, '/filter/k/k/k/k');
    await expect400('/search-many', { queryVectors: [[1, 1]], filter: keys(4) }, '/filter');
  });

  it('refuses an id that is too long and metadata that is too large', async () => {
    await expect400('/vectors/add', { id: '123456789', vector: [1, 1] }, '/id');
    await expect400('/vectors/get-many', { ids: ['ok', '123456789'] }, '/ids/1');
    await expect400('/vectors/add', { id: 'x', vector: [1, 1], metadata: { text: 'x'.repeat(200) } }, '/metadata');
  });

  it('refuses any body nested past the limit before validating it, however deep', async () => {
    const raw = '{"id":' + '['.repeat(100_000) + ']'.repeat(100_000) + '}';
    const res = await live.send('POST', '/vectors/has', { token, raw, headers: { 'content-type': 'application/json' } });
    // Past the 4096-byte body limit: 413 before any parsing.
    expect(res.status).to.equal(413);
    const small = '{"id":' + '['.repeat(1000) + ']'.repeat(1000) + '}';
    const wide = await live.send('POST', '/vectors/has', { token, raw: small });
    expect(wide.status).to.equal(400);
    expect(wide.body.error.code).to.equal('VALIDATION_ERROR');
    expect(wide.body.error.details.issues[0].path).to.equal('/id/0/0/0/0/0/0');
  });

  it('answers a body over MAX_BODY_BYTES with 413 PAYLOAD_TOO_LARGE', async () => {
    const res = await live.send('POST', '/vectors/add', { token, body: { id: 'big', vector: Array(2000).fill(1.5) } });
    expect(res.status).to.equal(413);
    expect(res.body.error.code).to.equal('PAYLOAD_TOO_LARGE');
    expect((await live.send('POST', '/vectors/has', { token, body: { id: 'big' } })).body.has).to.equal(false);
  });

  it('publishes the limits in GET /limits', async () => {
    const { limits } = (await live.send('GET', '/limits')).body;
    expect(limits).to.include({ maxJsonDepth: 4, maxMetadataKeys: 10, maxFilterKeys: 3, maxIdLength: 8, maxMetadataBytes: 200, maxBodyBytes: 4096 });
  });
});

describe('request limits with a large body allowance', () => {
  it('measures a body nested a million levels deep without a 5xx', async () => {
    const live = await startApp();
    try {
      const token = await live.newToken();
      const raw = '{"metadata":' + '{"a":'.repeat(1_000_000) + '1' + '}'.repeat(1_000_000) + ',"id":"x"}';
      const res = await live.send('POST', '/vectors/metadata/set', { token, raw });
      expect(res.status).to.equal(400);
      expect(res.body.error.code).to.be.oneOf(['VALIDATION_ERROR', 'INVALID_JSON']);
      expect((await live.send('GET', '/session', { token })).status).to.equal(200);
    } finally {
      await live.close();
    }
  });
});
