// "__proto__", "constructor" and "prototype" in metadata and filters are plain
// data: stored, returned and matched like any key, and no object's prototype
// changes. Bodies are sent as raw JSON text: a JS object literal with
// __proto__ would set a prototype before the request was even sent.
import { expect } from 'chai';
import { startApp, type LiveApp } from '../helpers/live-app.js';

const HOSTILE = '{"__proto__":{"polluted":true,"isAdmin":true},"constructor":{"prototype":{"polluted":true}},"prototype":{"x":1},"toString":"plain"}';

describe('prototype keys in metadata and filters', () => {
  let live: LiveApp;
  let token: string;

  beforeEach(async () => {
    live = await startApp();
    token = await live.newToken();
    const raw = `{"vectors":[{"id":"hostile","vector":[1,0],"metadata":${HOSTILE}},{"id":"plain","vector":[0,1],"metadata":{"a":1}}]}`;
    expect((await live.send('POST', '/vectors/add-many', { token, raw })).status).to.equal(200);
  });
  afterEach(async () => {
    await live.close();
    const probe: Record<string, unknown> = {};
    expect(probe.polluted, 'Object.prototype was polluted').to.equal(undefined);
    expect(probe.isAdmin).to.equal(undefined);
    expect(Object.prototype).not.to.have.property('polluted');
  });

  it('stores them as own keys and returns them unchanged', async () => {
    const res = await live.send('POST', '/vectors/metadata/get', { token, body: { id: 'hostile' } });
    expect(res.status).to.equal(200);
    const metadata = res.body.metadata;
    expect(Object.keys(metadata)).to.have.members(['__proto__', 'constructor', 'prototype', 'toString']);
    expect(JSON.stringify(metadata)).to.equal(HOSTILE);
    const got = await live.send('POST', '/vectors/get', { token, body: { id: 'hostile' } });
    expect(JSON.stringify(got.body.vector.metadata)).to.equal(HOSTILE);
  });

  it('matches a filter on "__proto__" only against vectors that hold that key', async () => {
    const raw = '{"queryVector":[1,1],"topK":10,"filter":{"__proto__":{"polluted":true,"isAdmin":true}}}';
    const res = await live.send('POST', '/search', { token, raw });
    expect(res.status).to.equal(200);
    expect(res.body.results.map((r: { id: string }) => r.id)).to.deep.equal(['hostile']);
  });

  it('does not match "constructor" or "toString" inherited from Object.prototype', async () => {
    for (const raw of [
      '{"queryVector":[1,1],"filter":{"constructor":{"prototype":{"polluted":true}}}}',
      '{"queryVector":[1,1],"filter":{"toString":"plain"}}',
    ]) {
      const res = await live.send('POST', '/search', { token, raw });
      expect(
        res.body.results.map((r: { id: string }) => r.id),
        raw,
      ).to.deep.equal(['hostile']);
    }
    const none = await live.send('POST', '/search', { token, raw: '{"queryVector":[1,1],"filter":{"hasOwnProperty":{}}}' });
    expect(none.body.results).to.deep.equal([]);
  });

  it('sets metadata with those keys through /vectors/metadata/set as data', async () => {
    const raw = '{"id":"plain","metadata":{"__proto__":[1,2],"prototype":null}}';
    expect((await live.send('POST', '/vectors/metadata/set', { token, raw })).status).to.equal(200);
    const res = await live.send('POST', '/vectors/metadata/get', { token, body: { id: 'plain' } });
    expect(JSON.stringify(res.body.metadata)).to.equal('{"__proto__":[1,2],"prototype":null}');
  });

  it('refuses "__proto__" as an unknown top-level request field', async () => {
    const res = await live.send('POST', '/vectors/has', { token, raw: '{"id":"plain","__proto__":{"id":"hostile"}}' });
    expect(res.status).to.equal(400);
    expect(res.body.error.code).to.equal('VALIDATION_ERROR');
  });
});
