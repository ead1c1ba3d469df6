// CORS: any origin by default (tokens are bearer headers, not cookies), or
// the CORS_ORIGINS list; preflights answer 204. Browsers enforce these
// headers (test/browser/cross-origin.test.ts); here they are read as sent.
import { expect } from 'chai';
import { ConfigError, loadConfig } from '../../src/config.js';
import { expectOk, useServer } from '../helpers/http.js';

const PAGE = 'http://localhost:8080';

function preflight(method = 'POST', headers = 'authorization,content-type', origin = PAGE) {
  return { origin: origin, 'access-control-request-method': method, 'access-control-request-headers': headers };
}

describe('CORS (default: any origin)', () => {
  const api = useServer();

  it('answers a preflight 204 with methods, headers and a max age', async () => {
    const res = await api.request('OPTIONS', '/vectors/add', { headers: preflight() });
    expect(res.status).to.equal(204);
    expect(res.headers.get('access-control-allow-origin')).to.equal('*');
    expect(res.headers.get('access-control-allow-methods')!.split(',')).to.include.members(['GET', 'POST']);
    expect(res.headers.get('access-control-allow-headers')!.split(',')).to.include.members(['authorization', 'content-type']);
    expect(Number(res.headers.get('access-control-max-age'))).to.be.greaterThan(0);
    expect(res.text).to.equal('');
  });

  it('answers API calls, errors and assets with Allow-Origin * and exposed headers', async () => {
    const token = expectOk(await api.post('/token', { headers: { origin: PAGE } }), 201).token;
    const answers = [
      await api.post('/search', { token, body: { queryVector: [1, 2] }, headers: { origin: PAGE } }),
      await api.get('/limits', { headers: { origin: PAGE } }),
      await api.get('/sdk.js', { headers: { origin: PAGE } }),
      await api.get('/kernel.wasm', { headers: { origin: PAGE } }),
      await api.get('/openapi.json', { headers: { origin: PAGE } }),
      await api.get('/nowhere', { headers: { origin: PAGE } }),
    ];
    expect(answers.map((r) => r.status)).to.deep.equal([200, 200, 200, 200, 200, 404]);
    for (const res of answers) {
      expect(res.headers.get('access-control-allow-origin')).to.equal('*');
      const exposed = res.headers.get('access-control-expose-headers')!.split(',');
      expect(exposed).to.include.members(['Server-Timing', 'Retry-After', 'RateLimit', 'RateLimit-Policy']);
    }
  });

  it('sends Allow-Origin * to callers that send no Origin', async () => {
    const res = await api.get('/limits');
    expect(res.headers.get('access-control-allow-origin')).to.equal('*');
  });

  it('publishes the allowed origins in GET /limits', async () => {
    expect(expectOk(await api.get('/limits')).limits.corsOrigins).to.deep.equal(['*']);
  });
});

describe('CORS (CORS_ORIGINS set)', () => {
  const other = 'http://127.0.0.1:9999';
  const api = useServer({ corsOrigins: `${PAGE}, https://app.example` });

  it('echoes a listed origin, with Vary: Origin', async () => {
    for (const origin of [PAGE, 'https://app.example']) {
      const res = await api.get('/limits', { headers: { origin } });
      expect(res.headers.get('access-control-allow-origin')).to.equal(origin);
      expect(res.headers.get('vary')).to.match(/origin/i);
    }
    const pre = await api.request('OPTIONS', '/search', { headers: preflight('POST', 'content-type', PAGE) });
    expect(pre.status).to.equal(204);
    expect(pre.headers.get('access-control-allow-origin')).to.equal(PAGE);
  });

  it('gives an unlisted origin no CORS headers, preflight included', async () => {
    const res = await api.get('/limits', { headers: { origin: other } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('access-control-allow-origin')).to.equal(null);
    const pre = await api.request('OPTIONS', '/search', { headers: preflight('POST', 'content-type', other) });
    expect(pre.headers.get('access-control-allow-origin')).to.equal(null);
    expect(pre.headers.get('access-control-allow-methods')).to.equal(null);
  });

  it('publishes the list in GET /limits', async () => {
    expect(expectOk(await api.get('/limits')).limits.corsOrigins).to.deep.equal([PAGE, 'https://app.example']);
  });
});

describe('CORS_ORIGINS', () => {
  it('takes * or a list of origins and refuses anything else at start-up', () => {
    expect(loadConfig({}).corsOrigins).to.equal('*');
    expect(loadConfig({ CORS_ORIGINS: 'https://a.example,http://localhost:3001' }).corsOrigins).to.equal('https://a.example,http://localhost:3001');
    for (const bad of ['https://a.example/', 'a.example', 'https://a.example/path', '*,https://a.example', ' , ', 'https://A.example']) {
      expect(() => loadConfig({ CORS_ORIGINS: bad }), bad).to.throw(ConfigError, /CORS_ORIGINS/);
    }
  });
});
