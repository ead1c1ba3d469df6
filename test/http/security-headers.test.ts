// The demo page and every asset carry headers that stop sniffing and framing;
// the page's policy admits its own inline script and style and nothing inline else.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { useServer } from '../helpers/http.js';

const html = readFileSync(new URL('../../src/demo/index.html', import.meta.url), 'utf8');
const hashOf = (text: string) => `'sha256-${createHash('sha256').update(text).digest('base64')}'`;

describe('security headers of the demo page and assets', () => {
  const api = useServer();

  it('sends the demo page with CSP, nosniff, frame-ancestors and a referrer policy', async () => {
    const res = await fetch(api.base + '/', { headers: { accept: 'text/html' } });
    expect(res.status).to.equal(200);
    expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
    expect(res.headers.get('referrer-policy')).to.equal('no-referrer');
    const csp = res.headers.get('content-security-policy')!;
    expect(csp).to.include("frame-ancestors 'none'");
    expect(csp).to.include("default-src 'none'");
    expect(csp).to.not.include('unsafe-inline');
    const script = /<script type="module">([\s\S]*?)<\/script>/.exec(html)![1];
    const style = /<style>([\s\S]*?)<\/style>/.exec(html)![1];
    expect(csp).to.match(new RegExp(`script-src [^;]*${hashOf(script).replace(/[+/]/g, '\\$&')}`));
    expect(csp).to.match(new RegExp(`style-src [^;]*${hashOf(style).replace(/[+/]/g, '\\$&')}`));
  });

  for (const path of ['/sdk.js', '/sdk.d.ts', '/kernel.wasm', '/openapi.json']) {
    it(`sends ${path} with nosniff and frame-ancestors 'none'`, async () => {
      const res = await fetch(api.base + path);
      expect(res.status).to.equal(200);
      expect(res.headers.get('x-content-type-options')).to.equal('nosniff');
      expect(res.headers.get('content-security-policy')).to.include("frame-ancestors 'none'");
    });
  }
});
