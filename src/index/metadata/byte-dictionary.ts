// An exact map from short byte strings to dense ids, all in typed arrays: an
// open-addressing hash table (linear probing, tombstones) over a key arena
// (key-arena.ts). A slot holds an id and its key's hash side by side, so a
// probe compares hashes without reaching into per-id arrays.
// The metadata index keys every (path, value) by its bytes here, so a session
// with millions of distinct values holds a handful of JS objects, not one
// string and one Map entry per value. Ids of removed keys are reused.
// No call does work that grows with the keys held: the table grows as
// Redis' dict does (a new table, the old one drained a few slots per add or
// remove, lookups consulting both), and the arena is compacted a chunk a step.

import { KeyArena } from './key-arena.js';
import { PagedArray } from './paged-array.js';
import { powerOfTwoAtLeast } from './typed-arrays.js';

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

/**
 * A slot is two words: the id plus one (EMPTY: never used, TOMBSTONE: its id
 * was removed or moved on) and the key's hash. EMPTY is 0, so a new table is
 * an allocation the system zeroes, not a fill.
 */
const EMPTY = 0;
const TOMBSTONE = -1;
const FIRST_SLOTS = 16;
/** Slots of the draining table moved on per add or remove: it is empty before the new table fills (see grow). */
export const DRAIN_SLOTS = 32;

export class ByteDictionary {
  private table = new Int32Array(2 * FIRST_SLOTS);
  /** Slots of `table` holding an id or a tombstone (the probe chains' length depends on both). */
  private usedSlots = 0;
  /** The table before the last growth, moved on DRAIN_SLOTS slots per add or remove; lookups consult both. */
  private draining: Int32Array | null = null;
  private drainAt = 0;
  private readonly keys = new KeyArena();
  private readonly freeIds = new PagedArray(Uint32Array);
  private freeCount = 0;
  /** Ids handed out so far (ids are below it). */
  private idTop = 0;
  /** Keys held. */
  size = 0;
  /** Slots moved from a draining table so far (tests bound it per call). */
  movedSlots = 0;

  /** One past the highest id in use or free: callers size their per-id arrays to it. */
  get idLimit(): number {
    return this.idTop;
  }

  /** Bytes of the typed arrays held. */
  get byteLength(): number {
    return this.table.byteLength + (this.draining?.byteLength ?? 0) + this.keys.byteLength + this.freeIds.byteLength;
  }

  /** Key bytes copied by compaction so far (tests bound it per call). */
  get copiedKeyBytes(): number {
    return this.keys.copiedBytes;
  }

  /** The most its arrays can grow by (as allocated) when `keys` new keys of `keyBytes` bytes in all are added. */
  growthUpper(keys: number, keyBytes: number): number {
    if (keys === 0) return 0;
    let bytes = this.keys.growthUpper(this.idTop + keys, keys, keyBytes);
    // The last table the growth makes and, still draining, the one before it (at most half of it).
    if ((this.usedSlots + keys) * 4 > this.slots(this.table) * 3) bytes += Math.max(0, 12 * this.slotsFor(this.size + keys) - this.table.byteLength);
    return bytes;
  }

  /** The id of the key `bytes[at, at + length)` (hash from hashBytes), or -1. */
  find(bytes: Uint8Array, length: number, hash: number, at = 0): number {
    const id = this.probe(this.table, bytes, length, hash, at);
    if (id >= 0 || this.draining === null) return id;
    return this.probe(this.draining, bytes, length, hash, at);
  }

  /** Add a key (`bytes[at, at + length)`) that find() did not find; its new id. */
  add(bytes: Uint8Array, length: number, hash: number, at = 0): number {
    this.drainStep();
    if ((this.usedSlots + 1) * 4 > this.slots(this.table) * 3) this.grow();
    const id = this.freeCount > 0 ? this.freeIds.get(--this.freeCount) : this.idTop++;
    this.keys.write(id, bytes, at, length);
    this.insert(id, hash);
    this.size++;
    return id;
  }

  /** Remove the key of `id`; the id may be handed out again. */
  remove(id: number): void {
    this.drainStep();
    const hash = hashBytes(this.keys.keyOf(id), this.keys.lengthOf(id));
    if (!this.tombstone(this.table, id, hash)) this.tombstone(this.draining!, id, hash);
    this.size--;
    this.keys.free(id);
    this.freeIds.ensure(this.freeCount + 1);
    this.freeIds.set(this.freeCount++, id);
    this.keys.compactStep();
  }

  /** Byte order of the keys of `a` and `b` from byte `from` on (no view made). */
  compareKeys(a: number, b: number, from: number): number {
    return this.keys.compare(a, b, from);
  }

  /** Byte order of the key of `id` from byte `from` on against `bytes`. */
  compareKeyTo(id: number, from: number, bytes: Uint8Array): number {
    return this.keys.compareTo(id, from, bytes);
  }

  /** The key of `id` (a view: read it before the next add or remove). */
  keyOf(id: number): Uint8Array {
    return this.keys.keyOf(id);
  }

  private slots(table: Int32Array): number {
    return table.length >>> 1;
  }

  /** Slots of a table for `keys` keys: twice them, and at least half the table's, so the table drains before the next growth. */
  private slotsFor(keys: number): number {
    return Math.max(FIRST_SLOTS, powerOfTwoAtLeast((keys + 1) * 2), this.slots(this.table) >>> 1);
  }

  /** The id of the key in `table`, or -1. */
  private probe(table: Int32Array, bytes: Uint8Array, length: number, hash: number, at: number): number {
    const mask = this.slots(table) - 1,
      signed = hash | 0;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const word = table[2 * slot];
      if (word === EMPTY) return -1;
      if (word > 0 && table[2 * slot + 1] === signed && this.keys.equals(word - 1, bytes, length, at)) return word - 1;
    }
  }

  private insert(id: number, hash: number): void {
    const table = this.table,
      mask = this.slots(table) - 1;
    let slot = hash & mask;
    while (table[2 * slot] > 0) slot = (slot + 1) & mask;
    if (table[2 * slot] === EMPTY) this.usedSlots++;
    table[2 * slot] = id + 1;
    table[2 * slot + 1] = hash;
  }

  /** Turn the slot of `id` in `table` into a tombstone; false when `table` does not hold it. */
  private tombstone(table: Int32Array, id: number, hash: number): boolean {
    const mask = this.slots(table) - 1;
    for (let slot = hash & mask; ; slot = (slot + 1) & mask) {
      const word = table[2 * slot];
      if (word === EMPTY) return false;
      if (word === id + 1) {
        table[2 * slot] = TOMBSTONE;
        return true;
      }
    }
  }

  /**
   * A new table for the keys held (twice them, without tombstones); the old
   * one drains into it a few slots per add or remove. It is empty before the
   * new one is 3/4 used: the new one has room for at least size/2 and
   * old/8 more adds, and each add moves DRAIN_SLOTS (more than 8) slots on.
   */
  private grow(): void {
    while (this.draining !== null) this.drainStep(); // not reached (see above); kept so one table at most drains
    const slots = this.slotsFor(this.size);
    this.draining = this.table;
    this.drainAt = 0;
    this.table = new Int32Array(2 * slots);
    this.usedSlots = 0;
  }

  /** Move the ids of DRAIN_SLOTS slots of the draining table into the table; a moved slot becomes a tombstone, so the chains through it still lead on. */
  private drainStep(): void {
    const old = this.draining;
    if (old === null) return;
    const end = Math.min(this.slots(old), this.drainAt + DRAIN_SLOTS);
    for (let slot = this.drainAt; slot < end; slot++) {
      const word = old[2 * slot];
      if (word <= 0) continue;
      this.insert(word - 1, old[2 * slot + 1]);
      old[2 * slot] = TOMBSTONE;
    }
    this.movedSlots += end - this.drainAt;
    this.drainAt = end;
    if (end === this.slots(old)) this.draining = null;
  }
}
