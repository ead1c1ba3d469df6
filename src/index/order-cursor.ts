// The opaque cursor of a listing ordered by a metadata value: the index's
// epoch (list-cursor.ts), a tag of the orderBy it was made for, and the key
// of the last row listed: its value (a number, or a string's UTF-8 bytes) and
// its insertion seq, or only the seq for a row without a value (listed last).
// A key names a place in the order whatever is written meanwhile, so a row
// stored and unchanged through a listing is listed exactly once.
import { apiError } from '../errors.js';
import { base64UrlToBytes, base64UrlToText, bytesToBase64Url, staleCursor } from './list-cursor.js';
import { hashText64 } from './metadata/canonical-json.js';

const PREFIX = 'o1';

/** Where a page ends: `rank` 0 a number, 1 a string, -1 a row without a value. */
export interface OrderKey {
  rank: number;
  number: number;
  bytes: Uint8Array;
  seq: number;
}

export interface OrderBy {
  path: string;
  direction: 'asc' | 'desc';
}

/** The orderBy a cursor was made for, as a short tag (a cursor is refused under another). */
export function orderTag({ path, direction }: OrderBy): string {
  const hash = hashText64(path);
  return direction[0] + hash[0].toString(36) + hash[1].toString(36);
}

export function encodeOrderCursor(epoch: string, tag: string, key: OrderKey): string {
  const value = key.rank === 0 ? `n${key.number}` : key.rank === 1 ? `s${bytesToBase64Url(key.bytes)}` : 'm';
  return bytesToBase64Url(new TextEncoder().encode(`${PREFIX}.${epoch}.${tag}.${key.seq.toString(36)}.${value}`));
}

/** The key a cursor points after; INVALID_CURSOR for anything this index did not hand out for this orderBy. */
export function decodeOrderCursor(cursor: string, epoch: string, tag: string, maxSeq: number, path = '/cursor'): OrderKey {
  // A number's text may hold a '.': the value is the rest after the fourth.
  const parts = base64UrlToText(cursor)?.split('.');
  const key = parts && parts.length >= 5 && parts[0] === PREFIX ? keyOf(parts[3], parts.slice(4).join('.')) : null;
  if (key === null) throw apiError('INVALID_CURSOR', 'not a cursor from POST /vectors/list with orderBy', { path });
  if (parts![1] !== epoch || key.seq > maxSeq) throw staleCursor(path);
  if (parts![2] !== tag) throw apiError('INVALID_CURSOR', 'this cursor was made for another orderBy; list again from the start', { path });
  return key;
}

function keyOf(seqText: string, value: string): OrderKey | null {
  if (!/^[0-9a-z]{1,12}$/.test(seqText)) return null;
  const seq = parseInt(seqText, 36);
  if (value === 'm') return { rank: -1, number: 0, bytes: EMPTY, seq };
  if (value[0] === 'n') {
    const number = Number(value.slice(1));
    return value.length > 1 && Number.isFinite(number) ? { rank: 0, number, bytes: EMPTY, seq } : null;
  }
  const bytes = value[0] === 's' ? base64UrlToBytes(value.slice(1)) : null;
  return bytes ? { rank: 1, number: 0, bytes, seq } : null;
}

const EMPTY = new Uint8Array(0);
