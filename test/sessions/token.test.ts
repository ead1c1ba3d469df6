// Tokens: unguessable, not the session id, stored only as a hash.
import { expect } from 'chai';
import { createHash } from 'node:crypto';
import { hashToken, newToken, TOKEN_PATTERN } from '../../src/sessions/token.js';

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
});
