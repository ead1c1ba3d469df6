// Tokens are 256-bit random secrets, base64url. The server keeps only their
// SHA-256 and looks sessions up by it, so a stolen store holds no usable
// token and no comparison of secret bytes depends on where they differ.
import { createHash, randomBytes } from 'node:crypto';

export const TOKEN_BYTES = 32;
/** base64url of 32 bytes, without padding. */
export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

export function newToken(): string {
  return randomBytes(TOKEN_BYTES).toString('base64url');
}

export function hashToken(token: string): string {
  return createHash('sha256').update(token).digest('hex');
}
