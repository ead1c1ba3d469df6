// An exact map from short byte strings to dense ids, all in typed arrays: an
// open-addressing hash table (linear probing, tombstones) over a key arena.
// A slot holds an id and its key's hash side by side, so a probe compares
// hashes without reaching into per-id arrays (one cache line, not two).
// The metadata index keys every (path, value) by its bytes here, so a session
// with millions of distinct values holds a handful of JS objects, not one
// string and one Map entry per value. Ids of removed keys are reused; the key
// arena is rewritten without its dead bytes once they outweigh the live ones.

import { grown, grownLength, powerOfTwoAtLeast } from './typed-arrays.js';

const EMPTY = -1;
const TOMBSTONE = -2;
/** Dead key bytes below this are left in the arena (rewriting would cost more than it frees). */
const MIN_KEY_REWRITE = 64 * 1024;

/** A random seed per process, so which values share a slot cannot be chosen by a caller. */
const SEED = (Math.random() * 0x100000000) >>> 0;

/** FNV-1a over bytes[at, at + length), seeded, with murmur3's finaliser to spread the low bits the table uses. */
export function hashBytes(bytes: Uint8Array, length: number, at = 0): number {
  let h = SEED ^ 0x811c9dc5;
  for (let i = at; i < at + length; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

/** Slots of a new table; each slot is two words: the id (or EMPTY, TOMBSTONE) and the key's hash. */
const FIRST_SLOTS = 16;
const emptyTable = (slots: number) => {
  const table = new Int32Array(2 * slots);
  for (let i = 0; i < table.length; i += 2) table[i] = EMPTY;
  return table;
};

export class ByteDictionary {
  private table = emptyTable(FIRST_SLOTS);
  /** Slots holding an id or a tombstone (the probe chains' length depends on both). */
  private usedSlots = 0;
  private keyStart = new Uint32Array(16);
  private keyLength = new Uint32Array(16);
  private keys = new Uint8Array(1024);
  private keyTop = 0;
  private deadKeyBytes = 0;
  private freeIds = new Uint32Array(16);
  private freeCount = 0;
  /** Ids handed out so far (ids are below it). */
  private idTop = 0;
  /** Keys held. */
  size = 0;

  /** One past the highest id in use or free: callers size their per-id arrays to it. */
  get idLimit(): number {
    return this.idTop;
  }

  /** Bytes of the typed arrays held. */
  get byteLength(): number {
    return this.table.byteLength + this.keyStart.byteLength + this.keyLength.byteLength + this.keys.byteLength + this.freeIds.byteLength;
  }

  /** The most its arrays can grow by (as allocated) when `keys` new keys of `keyBytes` bytes in all are added. */
  growthUpper(keys: number, keyBytes: number): number {
    if (keys === 0) return 0;
    const ids = grownLength(this.keyStart.length, this.idTop + keys) - this.keyStart.length;
    let bytes = 2 * 4 * ids + grownLength(this.keys.length, this.keyTop + keyBytes) - this.keys.length;
    // A rehash sizes the table for the keys then held: at most all of them.
    if ((this.usedSlots + keys) * 8 > this.table.length * 3) {
      bytes += Math.max(0, 2 * 4 * Math.max(FIRST_SLOTS, powerOfTwoAtLeast((this.size + keys + 1) * 2)) - this.table.byteLength);
    }
    return bytes;
  }

  /** The id of the key `bytes[at, at + length)` (hash from hashBytes), or -1. */
  find(bytes: Uint8Array, length: number, hash: number, at = 0): number {
    const table = this.table,
      mask = (table.length >>> 1) - 1,
      signed = hash | 0;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const id = table[2 * slot];
      if (id === EMPTY) return -1;
      if (id >= 0 && table[2 * slot + 1] === signed && this.keyEquals(id, bytes, length, at)) return id;
    }
  }

  /** Add a key (`bytes[at, at + length)`) that find() did not find; its new id. */
  add(bytes: Uint8Array, length: number, hash: number, at = 0): number {
    if ((this.usedSlots + 1) * 8 > this.table.length * 3) this.rehash();
    const id = this.freeCount > 0 ? this.freeIds[--this.freeCount] : this.idTop++;
    if (id >= this.keyStart.length) {
      this.keyStart = grown(this.keyStart, id + 1);
      this.keyLength = grown(this.keyLength, id + 1);
    }
    this.keys = grown(this.keys, this.keyTop + length);
    this.keys.set(bytes.subarray(at, at + length), this.keyTop);
    this.keyStart[id] = this.keyTop;
    this.keyLength[id] = length;
    this.keyTop += length;
    const table = this.table,
      mask = (table.length >>> 1) - 1;
    let slot = hash & mask;
    while (table[2 * slot] >= 0) slot = (slot + 1) & mask;
    if (table[2 * slot] === EMPTY) this.usedSlots++;
    table[2 * slot] = id;
    table[2 * slot + 1] = hash;
    this.size++;
    return id;
  }

  /** Remove the key of `id`; the id may be handed out again. */
  remove(id: number): void {
    const table = this.table,
      mask = (table.length >>> 1) - 1;
    let slot = hashBytes(this.keys.subarray(this.keyStart[id]), this.keyLength[id]) & mask;
    while (table[2 * slot] !== id) slot = (slot + 1) & mask;
    table[2 * slot] = TOMBSTONE;
    this.size--;
    this.deadKeyBytes += this.keyLength[id];
    this.keyLength[id] = 0;
    this.freeIds = grown(this.freeIds, this.freeCount + 1);
    this.freeIds[this.freeCount++] = id;
    if (this.deadKeyBytes >= MIN_KEY_REWRITE && this.deadKeyBytes * 2 > this.keyTop) this.rewriteKeys();
  }

  /** The key of `id` (a view: read it before the next add or remove). */
  keyOf(id: number): Uint8Array {
    return this.keys.subarray(this.keyStart[id], this.keyStart[id] + this.keyLength[id]);
  }

  private keyEquals(id: number, bytes: Uint8Array, length: number, at: number): boolean {
    if (this.keyLength[id] !== length) return false;
    const keys = this.keys,
      start = this.keyStart[id];
    for (let i = 0; i < length; i++) if (keys[start + i] !== bytes[at + i]) return false;
    return true;
  }

  /** A table sized for the keys held (twice them, at least 16 slots), without tombstones. */
  private rehash(): void {
    const slots = Math.max(FIRST_SLOTS, powerOfTwoAtLeast((this.size + 1) * 2));
    const table = emptyTable(slots),
      old = this.table,
      mask = slots - 1;
    for (let i = 0; i < old.length; i += 2) {
      const id = old[i];
      if (id < 0) continue;
      let slot = old[i + 1] & mask;
      while (table[2 * slot] !== EMPTY) slot = (slot + 1) & mask;
      table[2 * slot] = id;
      table[2 * slot + 1] = old[i + 1];
    }
    this.table = table;
    this.usedSlots = this.size;
  }

  /** Copy the live keys into a new arena, dropping the bytes of removed ones. */
  private rewriteKeys(): void {
    const live = this.keyTop - this.deadKeyBytes;
    const keys = new Uint8Array(Math.max(1024, powerOfTwoAtLeast(live * 2)));
    let top = 0;
    for (let i = 0; i < this.table.length; i += 2) {
      const id = this.table[i];
      if (id < 0) continue;
      const start = this.keyStart[id],
        length = this.keyLength[id];
      keys.set(this.keys.subarray(start, start + length), top);
      this.keyStart[id] = top;
      top += length;
    }
    this.keys = keys;
    this.keyTop = top;
    this.deadKeyBytes = 0;
  }
}
