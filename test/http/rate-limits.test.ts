// 429 RATE_LIMITED with Retry-After: POST /token per address, requests per token.
import { expect } from 'chai';
import { startApp, type LiveApp, type Reply } from '../helpers/live-app.js';

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
      tokensPerMinutePerAddress: 7,
      requestsPerSecondPerToken: 9,
      requestBurstPerToken: 18,
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
    live = await startApp({ tokenRatePerMin: 0, requestRatePerSec: 0, maxSessionsPerAddress: 0 }, { now });
    const token = await live.newToken();
    for (let i = 0; i < 100; i++) await live.newToken();
    for (let i = 0; i < 100; i++) expect((await live.send('GET', '/session', { token })).status).to.equal(200);
    const res = await live.send('GET', '/session', { token });
    expect([res.headers.get('ratelimit'), res.headers.get('ratelimit-policy')]).to.deep.equal([null, null]);
  });
});

describe('RateLimit header fields (IETF draft)', () => {
  let live: LiveApp;
  let clock = 1_700_000_000_000;
  const now = () => clock;
  const fields = (res: Reply) => [res.headers.get('ratelimit-policy'), res.headers.get('ratelimit')];
  afterEach(() => live?.close());

  it('POST /token shows the per-address policy and the budget left, 429 included', async () => {
    live = await startApp({ tokenRatePerMin: 3 }, { now });
    const seen = [];
    for (let i = 0; i < 4; i++) seen.push(fields(await live.send('POST', '/token')));
    // 3 a minute: a full bucket is 3, refilled from empty in 60 s; each token used takes 20 s to come back.
    expect(seen).to.deep.equal([
      ['"per-address";q=3;w=60', '"per-address";r=2;t=20'],
      ['"per-address";q=3;w=60', '"per-address";r=1;t=40'],
      ['"per-address";q=3;w=60', '"per-address";r=0;t=60'],
      ['"per-address";q=3;w=60', '"per-address";r=0;t=60'],
    ]);
    clock += 30_000;
    expect(fields(await live.send('POST', '/token'))[1]).to.equal('"per-address";r=0;t=50');
  });

  it('every authenticated answer shows the per-token budget: successes, errors and 429', async () => {
    live = await startApp({ requestRatePerSec: 2, tokenRatePerMin: 0 }, { now });
    const token = await live.newToken();
    const answers = [
      await live.send('GET', '/session', { token }),
      await live.send('POST', '/vectors/get', { token, body: { id: 'missing' } }),
      await live.send('POST', '/search', { token, body: { queryVector: 'not base64!' } }),
      await live.send('POST', '/vectors/clear', { token }),
      await live.send('POST', '/vectors/has', { token, body: { id: 'a' } }),
    ];
    expect(answers.map((r) => r.status)).to.deep.equal([200, 404, 400, 200, 429]);
    // 2 a second, a burst of 4: r=3 after the first; each token used takes 0.5 s to come back.
    const policy = '"per-token";q=4;w=2';
    expect(answers.map(fields)).to.deep.equal([
      [policy, '"per-token";r=3;t=1'],
      [policy, '"per-token";r=2;t=1'],
      [policy, '"per-token";r=1;t=2'],
      [policy, '"per-token";r=0;t=2'],
      [policy, '"per-token";r=0;t=2'],
    ]);
    // Unauthenticated answers are under no per-token budget.
    expect(fields(await live.send('GET', '/session', { token: 'nope' }))).to.deep.equal([null, null]);
    expect(fields(await live.send('GET', '/limits'))).to.deep.equal([null, null]);
  });

  it('the remaining budget matches what the server then accepts', async () => {
    live = await startApp({ requestRatePerSec: 5, tokenRatePerMin: 0 }, { now });
    const token = await live.newToken();
    let accepted = 0;
    let left = Number(/r=(\d+)/.exec((await live.send('GET', '/session', { token })).headers.get('ratelimit')!)![1]);
    while ((await live.send('GET', '/session', { token })).status === 200) accepted++;
    expect(accepted).to.equal(left);
    clock += 1000;
    left = Number(/r=(\d+)/.exec((await live.send('GET', '/session', { token })).headers.get('ratelimit')!)![1]);
    expect(left).to.equal(4); // 5 tokens back in a second, one taken by that request
  });
});
