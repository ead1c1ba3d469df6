// 429 RATE_LIMITED with Retry-After: POST /token per address, requests per token.
import { expect } from 'chai';
import { startApp, type LiveApp } from '../helpers/live-app.js';

describe('rate limits', () => {
  let live: LiveApp;
  let clock: number;
  const now = () => clock;

  beforeEach(() => {
    clock = 1_700_000_000_000;
  });
  afterEach(() => live?.close());

  it('publishes the limits in GET /limits', async () => {
    live = await startApp({ tokenRatePerMin: 7, requestRatePerSec: 9 }, { now });
    const res = await live.send('GET', '/limits');
    expect(res.body.limits.rateLimits).to.deep.equal({
      tokensPerMinutePerAddress: 7, requestsPerSecondPerToken: 9, requestBurstPerToken: 18,
    });
  });

  it('answers POST /token past the address rate with 429, then recovers', async () => {
    live = await startApp({ tokenRatePerMin: 3 }, { now });
    for (let i = 0; i < 3; i++) expect((await live.send('POST', '/token')).status).to.equal(201);
    const refused = await live.send('POST', '/token');
    expect(refused.status).to.equal(429);
    expect(refused.body.error.code).to.equal('RATE_LIMITED');
    expect(refused.headers.get('retry-after')).to.equal('20'); // 3 per minute: one every 20 s
    expect(live.store.size).to.equal(3);
    clock += 20_000;
    expect((await live.send('POST', '/token')).status).to.equal(201);
  });

  it('ignores X-Forwarded-For, so a caller cannot pick a fresh address per request', async () => {
    live = await startApp({ tokenRatePerMin: 1 }, { now });
    expect((await live.send('POST', '/token', { headers: { 'x-forwarded-for': '10.0.0.1' } })).status).to.equal(201);
    expect((await live.send('POST', '/token', { headers: { 'x-forwarded-for': '10.0.0.2' } })).status).to.equal(429);
  });

  it('limits requests per token to a burst of twice the rate, each token on its own', async () => {
    live = await startApp({ requestRatePerSec: 5 }, { now });
    const a = await live.newToken();
    const b = await live.newToken();
    for (let i = 0; i < 10; i++) expect((await live.send('GET', '/session', { token: a })).status, `request ${i}`).to.equal(200);
    const refused = await live.send('POST', '/vectors/has', { token: a, body: { id: 'x' } });
    expect(refused.status).to.equal(429);
    expect(refused.body.error.code).to.equal('RATE_LIMITED');
    expect(refused.headers.get('retry-after')).to.equal('1');
    expect((await live.send('GET', '/session', { token: b })).status).to.equal(200);
    clock += 200; // 5 per second: one token per 200 ms
    expect((await live.send('GET', '/session', { token: a })).status).to.equal(200);
    expect((await live.send('GET', '/session', { token: a })).status).to.equal(429);
  });

  it('does not apply a refused request', async () => {
    live = await startApp({ requestRatePerSec: 1 }, { now });
    const token = await live.newToken();
    await live.send('GET', '/session', { token });
    await live.send('GET', '/session', { token });
    const refused = await live.send('POST', '/vectors/add', { token, body: { id: 'a', vector: [1, 2] } });
    expect(refused.status).to.equal(429);
    clock += 10_000;
    expect((await live.send('POST', '/vectors/has', { token, body: { id: 'a' } })).body.has).to.equal(false);
  });

  it('turns both limits off with 0', async () => {
    live = await startApp({ tokenRatePerMin: 0, requestRatePerSec: 0 }, { now });
    const token = await live.newToken();
    for (let i = 0; i < 100; i++) await live.newToken();
    for (let i = 0; i < 100; i++) expect((await live.send('GET', '/session', { token })).status).to.equal(200);
  });
});
