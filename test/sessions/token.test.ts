// Tokens: unguessable, not the session id, stored only as a hash.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { hashToken, isTokenOf, newToken, TOKEN_PATTERN } from '../../src/sessions/token.js';

describe('tokens', () => {
  it('are 256 random bits as 43 base64url characters, all different', () => {
    const tokens = new Set(Array.from({ length: 2000 }, newToken));
    expect(tokens.size).to.equal(2000);
    for (const token of tokens) {
      expect(token).to.match(TOKEN_PATTERN);
      expect(Buffer.from(token, 'base64url')).to.have.length(32);
    }
  });

  it('use every base64url character position (not a fixed prefix or counter)', () => {
    const tokens = Array.from({ length: 200 }, newToken);
    for (let i = 0; i < 42; i++) expect(new Set(tokens.map((t) => t[i])).size, `position ${i}`).to.be.greaterThan(10);
  });

  it('hash to the hex SHA-256 of the token', () => {
    const token = newToken();
    expect(hashToken(token)).to.equal(createHash('sha256').update(token).digest('hex'));
    expect(hashToken(token)).to.not.equal(hashToken(newToken()));
  });

  it('with an instance id are `<id>.<secret>`, the secret as without one', () => {
    const tokens = Array.from({ length: 200 }, () => newToken('east2'));
    for (const token of tokens) {
      const [id, secret, ...rest] = token.split('.');
      expect([id, rest]).to.deep.equal(['east2', []]);
      expect(secret).to.match(TOKEN_PATTERN);
      expect(Buffer.from(secret, 'base64url')).to.have.length(32);
    }
    expect(new Set(tokens).size).to.equal(200);
  });

  it('belong to the instance named by their prefix only', () => {
    const plain = newToken();
    const mine = newToken('a1');
    expect([isTokenOf(mine, 'a1'), isTokenOf(plain, ''), isTokenOf(mine, 'a'), isTokenOf(mine, 'a12')]).to.deep.equal([true, true, false, false]);
    expect([isTokenOf(plain, 'a1'), isTokenOf(mine, ''), isTokenOf(newToken('b1'), 'a1')]).to.deep.equal([false, false, false]);
    expect([isTokenOf(`a1.${plain}x`, 'a1'), isTokenOf(`a1.${plain.slice(1)}`, 'a1'), isTokenOf(`a1:${plain}`, 'a1')]).to.deep.equal([false, false, false]);
  });
});
