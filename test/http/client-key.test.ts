import { expect } from 'chai';
import { clientKey } from '../../src/http/rate-limit.js';

describe('clientKey (the address POST /token is limited under)', () => {
  it('keeps an IPv4 address, also when IPv4-mapped', () => {
    expect(clientKey('127.0.0.1')).to.equal('127.0.0.1');
    expect(clientKey('::ffff:10.1.2.3')).to.equal('10.1.2.3');
    expect(clientKey('::FFFF:10.1.2.3')).to.equal('10.1.2.3');
  });

  it('groups IPv6 addresses by their /64, however they are written', () => {
    const key = '2001:db8:aa:1::/64';
    expect(clientKey('2001:db8:aa:1::1')).to.equal(key);
    expect(clientKey('2001:db8:aa:1:ffff:ffff:ffff:fffe')).to.equal(key);
    expect(clientKey('2001:0DB8:00aa:0001:0:0:0:9')).to.equal(key);
    expect(clientKey('2001:db8:aa:2::1')).to.not.equal(key);
    expect(clientKey('::1')).to.equal('0:0:0:0::/64');
    expect(clientKey('fe80::1')).to.equal('fe80:0:0:0::/64');
  });
});
