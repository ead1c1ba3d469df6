// Tokens are 256-bit random secrets, base64url. The server keeps only their
// SHA-256 and looks sessions up by it, so a stolen store holds no usable
// token and no comparison of secret bytes depends on where they differ.
import * as crypto from 'node:crypto';

export const TOKEN_BYTES = 32;
/** base64url of 32 bytes, without padding. */
export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function newToken(): string {
  return crypto.randomBytes(TOKEN_BYTES).toString('base64url');
}

/** crypto.hash (Node >= 20.12) is one native call; a Hash object costs three, on every request. */
const oneShot: ((algorithm: string, data: string) => string) | undefined = crypto.hash;

export function hashToken(token: string): string {
  return oneShot ? oneShot('sha256', token) : crypto.createHash('sha256').update(token).digest('hex');
}
