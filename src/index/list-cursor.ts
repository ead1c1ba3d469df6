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
  return toBase64Url(`${PREFIX}${epoch}.${seq.toString(36)}`);
}

/** The seq a cursor points after; INVALID_CURSOR for anything this index did not hand out. */
export function decodeCursor(cursor: string, epoch: string, maxSeq: number, path = '/cursor'): number {
  const text = fromBase64Url(cursor);
  const parts = text?.startsWith(PREFIX) ? text.slice(PREFIX.length).split('.') : null;
  if (parts?.length !== 2 || !/^[0-9a-z]{1,12}$/.test(parts[1])) {
    throw apiError('INVALID_CURSOR', 'not a cursor from POST /vectors/list', { path });
  }
  const seq = parseInt(parts[1], 36);
  if (parts[0] !== epoch || seq > maxSeq) {
    throw apiError('INVALID_CURSOR', 'this cursor belongs to another session, or to this one before a restart or reset; list again from the start', { path });
  }
  return seq;
}

function toBase64Url(text: string): string {
  return btoa(text).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

function fromBase64Url(text: string): string | null {
  if (!/^[A-Za-z0-9_-]{1,128}$/.test(text)) return null;
  try {
    return atob(text.replace(/-/g, '+').replace(/_/g, '/'));
  } catch {
    return null;
  }
}
