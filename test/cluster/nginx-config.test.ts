// The nginx configuration generator: the instance list in, one upstream and
// one map entry per instance out; bad lists refused with the reason.
import { expect } from 'chai';
import { ANY_INSTANCE_PATHS, clusterLimits, INTERNAL_PATHS, parseUpstreams, proxyConfig, serverConfig } from '../../src/cluster/nginx-config.js';
import { loadConfig } from '../../src/config.js';

/** What every configuration needs besides the instances and the body limits. */
const PROTECTIONS = {
  internalListen: '127.0.0.1:9091',
  timeouts: { headersMs: 7000, bodyIdleMs: 10_000, keepAliveMs: 5000 },
  perAddress: { connections: 100, requestsPerSec: 40 },
};
/** The public server block (the first), and the internal one. */
const blocks = (text: string) => {
  const [, publicBlock, internalBlock] = text.split(/^server \{$/m);
  return { publicBlock, internalBlock };
};

describe('nginx configuration generator', () => {
  it('reads id=host:port lists, IPv6 and names included', () => {
    expect(parseUpstreams('a=10.0.0.1:3000,b2=[::1]:80,c=node-3.internal:65535')).to.deep.equal([
      { id: 'a', host: '10.0.0.1', port: 3000 },
      { id: 'b2', host: '[::1]', port: 80 },
      { id: 'c', host: 'node-3.internal', port: 65535 },
    ]);
  });

  it('refuses bad ids, ports, shapes, duplicates and empty lists', () => {
    const cases: [string, RegExp][] = [
      ['A=10.0.0.1:1', /lowercase/],
      ['a.b=10.0.0.1:1', /lowercase/],
      ['a=10.0.0.1:0', /out of range/],
      ['a=10.0.0.1:70000', /out of range/],
      ['a=10.0.0.1', /id=host:port/],
      ['a:10.0.0.1:1', /id=host:port/],
      ['a=h:1,a=g:2', /twice/],
      ['', /no instances/],
    ];
    for (const [text, reason] of cases) expect(() => parseUpstreams(text), text).to.throw(reason);
  });

  it("routes each instance's token prefix to its own upstream, everything else to any instance", () => {
    const text = proxyConfig({
      listen: '127.0.0.1:8080',
      upstreams: parseUpstreams('a=127.0.0.1:1,b=127.0.0.1:2'),
      maxBodyBytes: 4096,
      maxImportBytes: 65536,
      ...PROTECTIONS,
    });
    expect(text.match(/^upstream tempvec_a \{\n {2}server 127\.0\.0\.1:1;\n {2}keepalive \d+;\n\}$/m)).to.not.equal(null);
    expect(text).to.include('  "~^[Bb][Ee][Aa][Rr][Ee][Rr] a\\." tempvec_a;').and.include('  default tempvec_any;');
    expect(text).to.include('client_max_body_size 4096;').and.include('proxy_set_header Connection "";');
    for (const path of ANY_INSTANCE_PATHS) expect(text).to.include(`location = ${path} { proxy_pass http://tempvec_any;`);
    expect(text).to.include('location ^~ /models/use-lite-512/ { proxy_pass http://tempvec_any;');
    expect(text.match(/max_fails=1/g)).to.have.length(2);
  });

  it('caps POST /vectors/import at MAX_IMPORT_BYTES, other bodies at MAX_BODY_BYTES', () => {
    const text = proxyConfig({ listen: '8080', upstreams: parseUpstreams('a=127.0.0.1:1'), maxBodyBytes: 4096, maxImportBytes: 65536, ...PROTECTIONS });
    const server = blocks(text).publicBlock;
    const importLocation = /\n {2}location = \/vectors\/import \{\n([\s\S]*?)\n {2}\}/.exec(server)?.[1] ?? '';
    expect(importLocation).to.include('client_max_body_size 65536;').and.include('error_page 413 = @import_too_large;');
    expect(importLocation).to.include('proxy_pass http://$tempvec_upstream;');
    // Its own error_page lines replace the server's: every one is repeated.
    const pages = (block: string) => block.match(/error_page [^;]+;/g)!.map((line) => line.replace(/@\w+_too_large/, '@too_large'));
    expect(pages(importLocation)).to.deep.equal(pages(server.slice(0, server.indexOf('location'))));
    expect(server.slice(0, server.indexOf('location'))).to.include('client_max_body_size 4096;');
    expect(text).to.match(/location @import_too_large \{[^}]*return 413 '[^']*"PAYLOAD_TOO_LARGE"[^']*65536 bytes \(MAX_IMPORT_BYTES\)/);
  });

  it('writes a whole foreground configuration under the prefix for the launcher', () => {
    const text = serverConfig({
      listen: '127.0.0.1:8080',
      upstreams: parseUpstreams('a=127.0.0.1:1'),
      maxBodyBytes: 1,
      maxImportBytes: 2,
      prefix: '/tmp/p',
      ...PROTECTIONS,
    });
    expect(text).to.match(/^daemon off;\n/);
    expect(text).to.include('pid /tmp/p/nginx.pid;').and.include('client_body_temp_path /tmp/p/client_body_temp;');
  });

  it("streams bodies to the instance (no temporary file before the token is checked) with the instances' client timeouts", () => {
    const config = loadConfig({ HEADERS_TIMEOUT_MS: '7000' });
    const { timeouts } = clusterLimits(config);
    expect(timeouts).to.deep.equal({ headersMs: 7000, bodyIdleMs: config.bodyGraceMs, keepAliveMs: config.idleTimeoutMs });
    const text = proxyConfig({ listen: '8080', upstreams: parseUpstreams('a=127.0.0.1:1'), maxBodyBytes: 1, maxImportBytes: 2, ...PROTECTIONS, timeouts });
    const { publicBlock } = blocks(text);
    expect(publicBlock).to.include('\n  proxy_request_buffering off;\n');
    expect(publicBlock).to.include('\n  client_header_timeout 7s;\n');
    expect(publicBlock).to.include(`\n  client_body_timeout ${config.bodyGraceMs / 1000}s;\n`);
    expect(publicBlock).to.include(`\n  keepalive_timeout ${config.idleTimeoutMs / 1000}s;\n`);
    expect(text).to.not.match(/proxy_request_buffering on/);
  });

  it("caps connections and requests per address from the instances' limits, 0 turning each off, with a JSON 429", () => {
    const config = loadConfig({ MAX_CONNECTIONS: '5000', REQUEST_RATE_PER_SEC: '30' });
    expect(clusterLimits(config).perAddress).to.deep.equal({ connections: 50, requestsPerSec: 60 });
    const upstreams = parseUpstreams('a=127.0.0.1:1');
    const text = proxyConfig({ listen: '8080', upstreams, maxBodyBytes: 1, maxImportBytes: 2, ...PROTECTIONS, ...clusterLimits(config) });
    expect(text).to.match(/^limit_conn_zone \$binary_remote_addr zone=tempvec_conn:10m;$/m);
    expect(text).to.match(/^limit_req_zone \$binary_remote_addr zone=tempvec_req:10m rate=60r\/s;$/m);
    const { publicBlock, internalBlock } = blocks(text);
    expect(publicBlock).to.include('\n  limit_conn tempvec_conn 50;\n').and.include('\n  limit_req zone=tempvec_req burst=120 nodelay;\n');
    expect(publicBlock).to.include('limit_req_status 429;').and.include('limit_conn_status 429;').and.include('error_page 429 = @rate_limited;');
    expect(publicBlock).to.match(/location @rate_limited \{[^}]*Retry-After 1[^}]*return 429 '[^']*"RATE_LIMITED"/);
    expect(internalBlock).to.not.include('limit_');

    const off = proxyConfig({
      listen: '8080',
      upstreams,
      maxBodyBytes: 1,
      maxImportBytes: 2,
      ...PROTECTIONS,
      perAddress: { connections: 0, requestsPerSec: 0 },
    });
    expect(off).to.not.match(/limit_req |limit_req_zone|limit_conn tempvec/);
  });

  it('answers /healthz, /readyz and /metrics on the internal listener only, 404 on the public one', () => {
    const text = proxyConfig({
      listen: '0.0.0.0:8080',
      upstreams: parseUpstreams('a=127.0.0.1:1,b=127.0.0.1:2'),
      maxBodyBytes: 1,
      maxImportBytes: 2,
      ...PROTECTIONS,
    });
    const { publicBlock, internalBlock } = blocks(text);
    expect(internalBlock).to.match(/^\n {2}listen 127\.0\.0\.1:9091;$/m);
    for (const path of INTERNAL_PATHS) {
      expect(ANY_INSTANCE_PATHS).to.not.include(path);
      expect(publicBlock).to.match(new RegExp(`location = ${path} \\{ default_type application/json; return 404 '[^']*"NOT_FOUND"`));
      expect(publicBlock).to.not.match(new RegExp(`location = ${path} \\{ proxy_pass`));
      expect(internalBlock).to.include(`location = ${path} { proxy_pass http://tempvec_any;`);
      for (const id of ['a', 'b']) expect(internalBlock).to.include(`location = /${id}${path} { proxy_pass http://tempvec_${id}${path}; }`);
    }
  });
});
