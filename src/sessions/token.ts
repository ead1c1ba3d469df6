// Tokens are 256-bit random secrets, base64url, prefixed with the issuing
// instance's id when INSTANCE_ID is set: `<instanceId>.<secret>` (a proxy
// routes on the prefix). The server keeps only their SHA-256 and looks
// sessions up by it, so a stolen store holds no usable token and no
// comparison of secret bytes depends on where they differ.
import * as crypto from 'node:crypto';

export const TOKEN_BYTES = 32;
/** base64url of 32 bytes, without padding. */
export const TOKEN_PATTERN = /^[A-Za-z0-9_-]{43}$/;

/** A new token; `instanceId` ('' for none) becomes its prefix. */
export function newToken(instanceId = ''): string {
  const secret = crypto.randomBytes(TOKEN_BYTES).toString('base64url');
  return instanceId === '' ? secret : `${instanceId}.${secret}`;
}

/** Whether `token` has the shape of a token instance `instanceId` issues (its prefix, then a secret). */
export function isTokenOf(token: string, instanceId: string): boolean {
  if (instanceId === '') return TOKEN_PATTERN.test(token);
  const prefix = instanceId.length + 1;
  return token.length === prefix + 43 && token.startsWith(instanceId) && token[instanceId.length] === '.' && TOKEN_PATTERN.test(token.slice(prefix));
}

/** crypto.hash (Node >= 20.12) is one native call; a Hash object costs three, on every request. */
const oneShot: ((algorithm: string, data: string) => string) | undefined = crypto.hash;

export function hashToken(token: string): string {
  return oneShot ? oneShot('sha256', token) : crypto.createHash('sha256').update(token).digest('hex');
}
