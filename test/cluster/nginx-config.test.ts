// The nginx configuration generator: the instance list in, one upstream and
// one map entry per instance out; bad lists refused with the reason.
import { expect } from 'chai';
import { ANY_INSTANCE_PATHS, parseUpstreams, proxyConfig, serverConfig } from '../../src/cluster/nginx-config.js';

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
    const text = proxyConfig({ listen: '127.0.0.1:8080', upstreams: parseUpstreams('a=127.0.0.1:1,b=127.0.0.1:2'), maxBodyBytes: 4096, maxImportBytes: 65536 });
    expect(text.match(/^upstream tempvec_a \{\n {2}server 127\.0\.0\.1:1;\n {2}keepalive \d+;\n\}$/m)).to.not.equal(null);
    expect(text).to.include('  "~^[Bb][Ee][Aa][Rr][Ee][Rr] a\\." tempvec_a;').and.include('  default tempvec_any;');
    expect(text).to.include('client_max_body_size 4096;').and.include('proxy_set_header Connection "";');
    for (const path of ANY_INSTANCE_PATHS) expect(text).to.include(`location = ${path} { proxy_pass http://tempvec_any;`);
    expect(text.match(/max_fails=1/g)).to.have.length(2);
  });

  it('caps POST /vectors/import at MAX_IMPORT_BYTES, other bodies at MAX_BODY_BYTES', () => {
    const text = proxyConfig({ listen: '8080', upstreams: parseUpstreams('a=127.0.0.1:1'), maxBodyBytes: 4096, maxImportBytes: 65536 });
    const server = text.slice(text.indexOf('server {'));
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
    const text = serverConfig({ listen: '127.0.0.1:8080', upstreams: parseUpstreams('a=127.0.0.1:1'), maxBodyBytes: 1, maxImportBytes: 2, prefix: '/tmp/p' });
    expect(text).to.match(/^daemon off;\n/);
    expect(text).to.include('pid /tmp/p/nginx.pid;').and.include('client_body_temp_path /tmp/p/client_body_temp;');
  });
});
