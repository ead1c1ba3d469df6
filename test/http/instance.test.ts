// INSTANCE_ID: tokens carry the instance's prefix, every response names the
// instance, and a token of another instance is answered like an unknown one.
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config.js';
import { newToken } from '../../src/sessions/token.js';
import { expectError, expectOk, useServer } from '../helpers/http.js';

describe('INSTANCE_ID', () => {
  const api = useServer({ instanceId: 'b7', tokenRatePerMin: 0 });
  const plain = useServer({ tokenRatePerMin: 0 });

  it('issues tokens `<instanceId>.<secret>` that work on that instance', async () => {
    const token = await api.token();
    expect(token).to.match(/^b7\.[A-Za-z0-9_-]{43}$/);
    expectOk(await api.post('/vectors/add', { token, body: { id: 'a', vector: [1, 2] } }));
    expect(expectOk(await api.get('/session', { token })).session.vectorCount).to.equal(1);
  });

  it('names the instance in x-tempvec-instance on every kind of response', async () => {
    const token = await api.token();
    const responses = await Promise.all([
      api.get('/session', { token }),
      api.get('/limits'),
      api.get('/sdk.js'),
      api.get('/metrics'),
      api.get('/nope'),
      api.post('/search', { token, body: { queryVector: 'x' } }),
      api.get('/session', { token: 'garbage' }),
    ]);
    for (const res of responses) expect(res.headers.get('x-tempvec-instance'), `${res.status} ${res.text.slice(0, 80)}`).to.equal('b7');
  });

  it('answers a token of another instance, or a plain one, like an unknown token', async () => {
    const unknown = await api.get('/session', { token: newToken('b7') });
    const other = await api.get('/session', { token: newToken('c3') });
    const unprefixed = await api.get('/session', { token: await plain.token() });
    const known = expectError(unknown, 401, 'INVALID_TOKEN');
    for (const res of [other, unprefixed]) {
      expect(expectError(res, 401, 'INVALID_TOKEN')).to.deep.equal(known);
      expect(res.headers.get('www-authenticate')).to.equal(unknown.headers.get('www-authenticate'));
    }
  });

  it('leaves tokens and headers as they were without INSTANCE_ID', async () => {
    const res = await plain.post('/token');
    expect(expectOk(res, 201).token).to.match(/^[A-Za-z0-9_-]{43}$/);
    expect(res.headers.get('x-tempvec-instance')).to.equal(null);
    expectError(await plain.get('/session', { token: await api.token() }), 401, 'INVALID_TOKEN');
  });

  it('refuses at start-up an id that is not 1 to 16 lowercase letters or digits', () => {
    for (const bad of ['A1', 'a.b', 'a-b', 'x'.repeat(17), ' a', 'é']) {
      expect(() => loadConfig({ INSTANCE_ID: bad }), bad).to.throw(ConfigError, /INSTANCE_ID/);
    }
    for (const good of ['a', '0', 'x'.repeat(16), 'node3']) expect(loadConfig({ INSTANCE_ID: good }).instanceId).to.equal(good);
  });
});
