// The opaque cursor of a listing: the index's epoch (random, per index
// instance) and the insertion seq of the last vector listed. A cursor from
// another session, or from before a restart, carries another epoch and is
// refused rather than silently listing from an unrelated position.
import { apiError } from '../errors.js';

const PREFIX = 'c1.';

/** A random tag for one index instance (crypto.getRandomValues: browsers and Node alike). */
export function newEpoch(): string {
  const words = crypto.getRandomValues(new Uint32Array(2));
  return words[0].toString(36) + words[1].toString(36);
}

export function encodeCursor(epoch: string, seq: number): string {
  return bytesToBase64Url(new TextEncoder().encode(`${PREFIX}${epoch}.${seq.toString(36)}`));
}

/** The seq a cursor points after; INVALID_CURSOR for anything this index did not hand out. */
export function decodeCursor(cursor: string, epoch: string, maxSeq: number, path = '/cursor'): number {
  const text = /^[A-Za-z0-9_-]{1,128}$/.test(cursor) ? base64UrlToText(cursor) : null;
  const parts = text?.startsWith(PREFIX) ? text.slice(PREFIX.length).split('.') : null;
  if (parts?.length !== 2 || !/^[0-9a-z]{1,12}$/.test(parts[1])) {
    throw apiError('INVALID_CURSOR', 'not a cursor from POST /vectors/list', { path });
  }
  const seq = parseInt(parts[1], 36);
  if (parts[0] !== epoch || seq > maxSeq) throw staleCursor(path);
  return seq;
}

/** A cursor of another index instance, or past what this one holds. */
export function staleCursor(path: string) {
  return apiError('INVALID_CURSOR', 'this cursor belongs to another session, or to this one before a restart or reset; list again from the start', { path });
}

export function bytesToBase64Url(bytes: Uint8Array): string {
  let binary = '';
  for (let i = 0; i < bytes.length; i++) binary += String.fromCharCode(bytes[i]);
  return btoa(binary).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

export function base64UrlToBytes(text: string): Uint8Array | null {
  if (!/^[A-Za-z0-9_-]*$/.test(text)) return null;
  try {
    const binary = atob(text.replace(/-/g, '+').replace(/_/g, '/'));
    return Uint8Array.from(binary, (c) => c.charCodeAt(0));
  } catch {
    return null;
  }
}

/** The UTF-8 text of a non-empty base64url string; null for anything else. */
export function base64UrlToText(text: string): string | null {
  const bytes = text.length > 0 ? base64UrlToBytes(text) : null;
  if (bytes === null) return null;
  try {
    return new TextDecoder('utf-8', { fatal: true }).decode(bytes);
  } catch {
    return null;
  }
}
