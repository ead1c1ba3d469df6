// TRUST_PROXY: behind the cluster's nginx (which overwrites X-Forwarded-For
// with the client's address) POST /token is limited per client, not per proxy;
// without it the header is ignored, so a caller cannot pick a fresh address.
import { expect } from 'chai';
import { expectError, useServer } from '../helpers/http.js';

const from = (address: string) => ({ headers: { 'x-forwarded-for': address } });

describe('TRUST_PROXY and the per-address limit of POST /token', () => {
  const frozen = Date.now();
  const proxied = useServer({ trustProxy: 1, tokenRatePerMin: 2 }, () => frozen);
  const direct = useServer({ tokenRatePerMin: 2 }, () => frozen);

  it('limits each X-Forwarded-For address on its own with TRUST_PROXY=1', async () => {
    for (let i = 0; i < 2; i++) expect((await proxied.post('/token', from('203.0.113.7'))).status).to.equal(201);
    expectError(await proxied.post('/token', from('203.0.113.7')), 429, 'RATE_LIMITED');
    expect((await proxied.post('/token', from('198.51.100.9'))).status).to.equal(201);
  });

  it('ignores X-Forwarded-For without it', async () => {
    for (let i = 0; i < 2; i++) expect((await direct.post('/token', from(`203.0.113.${i}`))).status).to.equal(201);
    expectError(await direct.post('/token', from('198.51.100.9')), 429, 'RATE_LIMITED');
  });
});
