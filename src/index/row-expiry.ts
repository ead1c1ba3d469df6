// Per-record TTL: each row's ttlMs and the instant it expires (absolute ms,
// Infinity for a row without one), in two Float64Arrays that follow the row
// table's moves. A row whose expiry has passed is gone from every read at
// once (live-rows.ts leaves it out), though it stays here until a sweep
// removes it (VectorIndex.removeExpired). The arrays are allocated only once
// a row has a ttl.
import type { RowBitmap } from './bitmap.js';
import type { RowMove } from './row-table.js';
import { grown, grownLength } from './metadata/typed-arrays.js';

/** Bytes the store keeps per row once any row has a ttl. */
export const EXPIRY_BYTES_PER_ROW = 16;

/** A row's ttl and expiry, as get, list and export show them. */
export interface RowTtl {
  ttlMs: number;
  expiresAt: number;
}

/** A record's ttl and expiry as answers show them (expiresAt ISO 8601); {} for a record without one. */
export function ttlFields(ttl: { ttlMs?: number; expiresAt?: number }): { ttlMs?: number; expiresAt?: string } {
  return ttl.ttlMs === undefined || ttl.expiresAt === undefined ? {} : { ttlMs: ttl.ttlMs, expiresAt: new Date(ttl.expiresAt).toISOString() };
}

/** The expiry as a read sees it (RowExpiry's reads). */
export interface ExpiryRead {
  /** Rows that have a ttl (expired or not). */
  readonly rowsWithTtl: number;
  growthUpper(rows: number): number;
  ttlOf(row: number): RowTtl | null;
  isLive(row: number, now: number): boolean;
  anyExpired(now: number, size: number): boolean;
  clearExpired(bitmap: RowBitmap, now: number): void;
  expiredCount(now: number, size: number): number;
  expiredRows(now: number, size: number, max: number): number[];
}

export class RowExpiry implements ExpiryRead {
  private ttls = new Float64Array(0);
  private expires = new Float64Array(0);
  private withTtl = 0;
  /** At or before every row's expiry: no row has expired before it (recomputed by a scan once passed). */
  private earliest = Number.POSITIVE_INFINITY;

  get rowsWithTtl(): number {
    return this.withTtl;
  }

  /** Bytes held (counted in the memory budget with the metadata store). */
  get byteLength(): number {
    return this.ttls.byteLength + this.expires.byteLength;
  }

  /** The most bytes giving `rows` rows a ttl can add (the upsert plan's budget). */
  growthUpper(rows: number): number {
    return (grownLength(this.expires.length, rows) - this.expires.length) * EXPIRY_BYTES_PER_ROW;
  }

  /** `row` gets `ttl` (null: none, and no expiry). */
  set(row: number, ttl: RowTtl | null): void {
    const had = row < this.expires.length && this.expires[row] !== Number.POSITIVE_INFINITY;
    if (ttl === null) {
      if (!had) return;
      this.withTtl--;
      this.expires[row] = Number.POSITIVE_INFINITY;
      this.ttls[row] = 0;
      return;
    }
    if (row >= this.expires.length) {
      this.expires = grown(this.expires, row + 1, Number.POSITIVE_INFINITY);
      this.ttls = grown(this.ttls, row + 1);
    }
    if (!had) this.withTtl++;
    this.ttls[row] = ttl.ttlMs;
    this.expires[row] = ttl.expiresAt;
    if (ttl.expiresAt < this.earliest) this.earliest = ttl.expiresAt;
  }

  ttlOf(row: number): RowTtl | null {
    if (row >= this.expires.length || this.expires[row] === Number.POSITIVE_INFINITY) return null;
    return { ttlMs: this.ttls[row], expiresAt: this.expires[row] };
  }

  isLive(row: number, now: number): boolean {
    return row >= this.expires.length || this.expires[row] > now;
  }

  /** Whether any of rows [0, size) has expired at `now`: O(1) while `now` is before the earliest expiry. */
  anyExpired(now: number, size: number): boolean {
    if (now < this.earliest) return false;
    const expires = this.expires;
    const end = Math.min(size, expires.length);
    let earliest = Number.POSITIVE_INFINITY;
    for (let row = 0; row < end; row++) {
      const at = expires[row];
      if (at <= now) return true;
      if (at < earliest) earliest = at;
    }
    this.earliest = earliest;
    return false;
  }

  /** Rows of [0, size) expired at `now`. */
  expiredCount(now: number, size: number): number {
    if (!this.anyExpired(now, size)) return 0;
    let count = 0;
    const end = Math.min(size, this.expires.length);
    for (let row = 0; row < end; row++) if (this.expires[row] <= now) count++;
    return count;
  }

  /** Up to `max` rows of [0, size) expired at `now`, highest first (removing one moves only a later row). */
  expiredRows(now: number, size: number, max: number): number[] {
    const out: number[] = [];
    for (let row = Math.min(size, this.expires.length) - 1; row >= 0 && out.length < max; row--) if (this.expires[row] <= now) out.push(row);
    return out;
  }

  /** Clear the bits of the rows expired at `now` in `bitmap`. */
  clearExpired(bitmap: RowBitmap, now: number): void {
    const end = Math.min(bitmap.size, this.expires.length);
    const { words } = bitmap;
    for (let row = 0; row < end; row++) if (this.expires[row] <= now) words[row >>> 5] &= ~(1 << (row & 31));
  }

  /** The row table's removal: the last row's ttl moves into `move.row`. */
  remove(move: RowMove): void {
    this.set(move.row, null);
    if (move.row === move.last || move.last >= this.expires.length) return;
    const moved = this.ttlOf(move.last);
    this.set(move.last, null);
    this.set(move.row, moved);
  }

  clear(): void {
    this.ttls = new Float64Array(0);
    this.expires = new Float64Array(0);
    this.withTtl = 0;
    this.earliest = Number.POSITIVE_INFINITY;
  }
}
