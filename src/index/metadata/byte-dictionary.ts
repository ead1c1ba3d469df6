// An exact map from short byte strings to dense ids, all in typed arrays: an
// open-addressing hash table (linear probing, tombstones) over a key arena.
// The metadata index keys every (path, value) by its bytes here, so a session
// with millions of distinct values holds a handful of JS objects, not one
// string and one Map entry per value. Ids of removed keys are reused; the key
// arena is rewritten without its dead bytes once they outweigh the live ones.

import { grown, powerOfTwoAtLeast } from './typed-arrays.js';

const EMPTY = -1;
const TOMBSTONE = -2;
/** Dead key bytes below this are left in the arena (rewriting would cost more than it frees). */
const MIN_KEY_REWRITE = 64 * 1024;

/** A random seed per process, so which values share a slot cannot be chosen by a caller. */
const SEED = (Math.random() * 0x100000000) >>> 0;

/** FNV-1a over the bytes, seeded, with murmur3's finaliser to spread the low bits the table uses. */
export function hashBytes(bytes: Uint8Array, length: number): number {
  let h = SEED ^ 0x811c9dc5;
  for (let i = 0; i < length; i++) h = Math.imul(h ^ bytes[i], 0x01000193);
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) >>> 0;
}

export class ByteDictionary {
  private table = new Int32Array(16).fill(EMPTY);
  /** Slots holding an id or a tombstone (the probe chains' length depends on both). */
  private usedSlots = 0;
  private hashOf = new Uint32Array(16);
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
    return this.table.byteLength + this.hashOf.byteLength + this.keyStart.byteLength + this.keyLength.byteLength
      + this.keys.byteLength + this.freeIds.byteLength;
  }

  /** The id of the key `bytes[0, length)` (hash from hashBytes), or -1. */
  find(bytes: Uint8Array, length: number, hash: number): number {
    const mask = this.table.length - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const id = this.table[slot];
      if (id === EMPTY) return -1;
      if (id >= 0 && this.hashOf[id] === hash && this.keyEquals(id, bytes, length)) return id;
    }
  }

  /** Add a key that find() did not find; its new id. */
  add(bytes: Uint8Array, length: number, hash: number): number {
    if ((this.usedSlots + 1) * 4 > this.table.length * 3) this.rehash();
    const id = this.freeCount > 0 ? this.freeIds[--this.freeCount] : this.idTop++;
    if (id >= this.hashOf.length) {
      this.hashOf = grown(this.hashOf, id + 1);
      this.keyStart = grown(this.keyStart, id + 1);
      this.keyLength = grown(this.keyLength, id + 1);
    }
    this.keys = grown(this.keys, this.keyTop + length);
    this.keys.set(bytes.subarray(0, length), this.keyTop);
    this.keyStart[id] = this.keyTop;
    this.keyLength[id] = length;
    this.keyTop += length;
    this.hashOf[id] = hash;
    const mask = this.table.length - 1;
    let slot = hash & mask;
    while (this.table[slot] >= 0) slot = (slot + 1) & mask;
    if (this.table[slot] === EMPTY) this.usedSlots++;
    this.table[slot] = id;
    this.size++;
    return id;
  }

  /** Remove the key of `id`; the id may be handed out again. */
  remove(id: number): void {
    const mask = this.table.length - 1;
    let slot = this.hashOf[id] & mask;
    while (this.table[slot] !== id) slot = (slot + 1) & mask;
    this.table[slot] = TOMBSTONE;
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

  clear(): void {
    this.table = new Int32Array(16).fill(EMPTY);
    this.hashOf = new Uint32Array(16);
    this.keyStart = new Uint32Array(16);
    this.keyLength = new Uint32Array(16);
    this.keys = new Uint8Array(1024);
    this.freeIds = new Uint32Array(16);
    this.usedSlots = this.keyTop = this.deadKeyBytes = this.freeCount = this.idTop = this.size = 0;
  }

  private keyEquals(id: number, bytes: Uint8Array, length: number): boolean {
    if (this.keyLength[id] !== length) return false;
    const keys = this.keys, start = this.keyStart[id];
    for (let i = 0; i < length; i++) if (keys[start + i] !== bytes[i]) return false;
    return true;
  }

  /** A table sized for the keys held (twice them, at least 16 slots), without tombstones. */
  private rehash(): void {
    const table = new Int32Array(Math.max(16, powerOfTwoAtLeast((this.size + 1) * 2))).fill(EMPTY);
    const mask = table.length - 1;
    for (const id of this.table) {
      if (id < 0) continue;
      let slot = this.hashOf[id] & mask;
      while (table[slot] !== EMPTY) slot = (slot + 1) & mask;
      table[slot] = id;
    }
    this.table = table;
    this.usedSlots = this.size;
  }

  /** Copy the live keys into a new arena, dropping the bytes of removed ones. */
  private rewriteKeys(): void {
    const live = this.keyTop - this.deadKeyBytes;
    const keys = new Uint8Array(Math.max(1024, powerOfTwoAtLeast(live * 2)));
    let top = 0;
    for (const id of this.table) {
      if (id < 0) continue;
      const start = this.keyStart[id], length = this.keyLength[id];
      keys.set(this.keys.subarray(start, start + length), top);
      this.keyStart[id] = top;
      top += length;
    }
    this.keys = keys;
    this.keyTop = top;
    this.deadKeyBytes = 0;
  }
}
