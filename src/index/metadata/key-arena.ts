// The keys of a ByteDictionary, by id, outside the JS heap: each key is a
// record (its id, its length, its bytes) appended to the open chunk (64 KiB,
// or one key's size if larger). Removing a key leaves a hole; once a chunk is
// half holes it waits in a queue, and each compactStep() copies the live
// records of one such chunk to the open chunk and lets it go. No step copies
// more than a chunk, however many keys the dictionary holds: growing never
// copies the keys already stored.

import { PagedArray, pagedLength } from './paged-array.js';

export const CHUNK_BYTES = 64 * 1024;
/** Chunks let go and kept for reuse at most (1 MiB). */
const SPARE_CHUNKS = 16;
/** A record's header: the key's id and length, 4 bytes each (little-endian). */
const HEADER = 8;
const NO_CHUNK = 0xffffffff;

interface Chunk {
  readonly bytes: Uint8Array;
  /** Bytes appended so far. */
  used: number;
  /** Bytes of records still in use. */
  live: number;
  /** Waiting in `halfEmpty` for a compaction step. */
  queued: boolean;
}

const readU32 = (b: Uint8Array, at: number) => (b[at] | (b[at + 1] << 8) | (b[at + 2] << 16) | (b[at + 3] << 24)) >>> 0;
const writeU32 = (b: Uint8Array, at: number, value: number) => {
  b[at] = value & 0xff;
  b[at + 1] = (value >>> 8) & 0xff;
  b[at + 2] = (value >>> 16) & 0xff;
  b[at + 3] = value >>> 24;
};

export class KeyArena {
  /** Per id: its record's chunk (NO_CHUNK: no key) and where its bytes start in it (after the header). */
  private readonly chunkOf = new PagedArray(Uint32Array, NO_CHUNK);
  private readonly offsetOf = new PagedArray(Uint32Array);
  private chunks: (Chunk | null)[] = [];
  /** Chunks (not the open one) at least half holes, to compact. */
  private halfEmpty: number[] = [];
  private open = -1;
  private chunkBytes = 0;
  /** Chunks let go, kept for reuse: compaction lets one go for about every one it fills, and every new ArrayBuffer brings V8's next full GC nearer. */
  private readonly spare: Uint8Array[] = [];
  /** Record bytes copied by compaction so far (tests bound it per step). */
  copiedBytes = 0;

  /** Bytes of the typed arrays held. */
  get byteLength(): number {
    return this.chunkBytes + this.chunkOf.byteLength + this.offsetOf.byteLength;
  }

  /**
   * The most it can grow by (as allocated) when `keys` keys of `keyBytes`
   * bytes in all are written and ids reach `idLimit`: the per-id arrays, the
   * records with the tails of the chunks they fill, and one chunk a
   * compaction step may open.
   */
  growthUpper(idLimit: number, keys: number, keyBytes: number): number {
    if (keys === 0) return 0;
    const ids = pagedLength(this.chunkOf.length, idLimit) - this.chunkOf.length;
    const records = keyBytes + HEADER * keys;
    const open = this.open >= 0 ? this.chunks[this.open]! : null;
    const free = open ? open.bytes.length - open.used : 0;
    const chunks = records <= free ? 0 : 2 * records + CHUNK_BYTES;
    return 8 * ids + chunks + CHUNK_BYTES;
  }

  /** Store `bytes[at, at + length)` as the key of `id` (which has none). */
  write(id: number, bytes: Uint8Array, at: number, length: number): void {
    this.chunkOf.ensure(id + 1);
    this.offsetOf.ensure(id + 1);
    const index = this.room(HEADER + length);
    const chunk = this.chunks[index]!;
    const start = chunk.used;
    writeU32(chunk.bytes, start, id);
    writeU32(chunk.bytes, start + 4, length);
    chunk.bytes.set(bytes.subarray(at, at + length), start + HEADER);
    chunk.used += HEADER + length;
    chunk.live += HEADER + length;
    this.chunkOf.set(id, index);
    this.offsetOf.set(id, start + HEADER);
  }

  /** Let go of the key of `id` (a hole until its chunk is compacted). */
  free(id: number): void {
    const index = this.chunkOf.get(id);
    const chunk = this.chunks[index]!;
    chunk.live -= HEADER + this.lengthOf(id);
    this.chunkOf.set(id, NO_CHUNK);
    if (index === this.open) return;
    if (chunk.live === 0) this.dropChunk(index);
    else this.queueIfHalfEmpty(index);
  }

  lengthOf(id: number): number {
    return readU32(this.chunks[this.chunkOf.get(id)]!.bytes, this.offsetOf.get(id) - 4);
  }

  /** The key of `id` (a view: read it before the next write, free or step). */
  keyOf(id: number): Uint8Array {
    const bytes = this.chunks[this.chunkOf.get(id)]!.bytes,
      start = this.offsetOf.get(id);
    return bytes.subarray(start, start + readU32(bytes, start - 4));
  }

  /** Whether the key of `id` is `bytes[at, at + length)`. */
  equals(id: number, bytes: Uint8Array, length: number, at: number): boolean {
    const keys = this.chunks[this.chunkOf.get(id)]!.bytes,
      start = this.offsetOf.get(id);
    if (readU32(keys, start - 4) !== length) return false;
    for (let i = 0; i < length; i++) if (keys[start + i] !== bytes[at + i]) return false;
    return true;
  }

  /** One step of compaction: the live records of one chunk at least half holes (not the open one) move to the open chunk. */
  compactStep(): void {
    let worst = -1;
    while (worst < 0 && this.halfEmpty.length > 0) {
      const index = this.halfEmpty.pop()!;
      const chunk = this.chunks[index];
      if (chunk?.queued && index !== this.open) worst = index;
      if (chunk) chunk.queued = false;
    }
    if (worst < 0) return;
    const from = this.chunks[worst]!;
    for (let at = 0; at < from.used && from.live > 0; ) {
      const id = readU32(from.bytes, at),
        size = HEADER + readU32(from.bytes, at + 4);
      if (this.chunkOf.get(id) === worst && this.offsetOf.get(id) === at + HEADER) this.moveRecord(id, from, at, size);
      at += size;
    }
    this.dropChunk(worst);
  }

  private moveRecord(id: number, from: Chunk, at: number, size: number): void {
    const index = this.room(size);
    const to = this.chunks[index]!;
    to.bytes.set(from.bytes.subarray(at, at + size), to.used);
    this.chunkOf.set(id, index);
    this.offsetOf.set(id, to.used + HEADER);
    to.used += size;
    to.live += size;
    from.live -= size;
    this.copiedBytes += size;
  }

  /** The index of a chunk with `size` free bytes at its end: the open one, or a new one made open. */
  private room(size: number): number {
    const open = this.open >= 0 ? this.chunks[this.open]! : null;
    if (open && open.used + size <= open.bytes.length) return this.open;
    const was = this.open;
    if (open && open.live === 0) this.dropChunk(was);
    const bytes = this.newChunk(size);
    let index = this.chunks.indexOf(null);
    if (index < 0) index = this.chunks.length;
    this.chunks[index] = { bytes, used: 0, live: 0, queued: false };
    this.open = index;
    if (was >= 0 && this.chunks[was]) this.queueIfHalfEmpty(was);
    return index;
  }

  private queueIfHalfEmpty(index: number): void {
    const chunk = this.chunks[index]!;
    if (chunk.queued || (chunk.used - chunk.live) * 2 < chunk.bytes.length) return;
    chunk.queued = true;
    this.halfEmpty.push(index);
  }

  /** A chunk of at least `size` bytes: a spare one, or new. */
  private newChunk(size: number): Uint8Array {
    if (size <= CHUNK_BYTES && this.spare.length > 0) return this.spare.pop()!;
    const bytes = new Uint8Array(Math.max(CHUNK_BYTES, size));
    this.chunkBytes += bytes.length;
    return bytes;
  }

  /** Let a chunk go: kept as a spare (still counted) while there are few, else freed. */
  private dropChunk(index: number): void {
    const bytes = this.chunks[index]!.bytes;
    if (bytes.length === CHUNK_BYTES && this.spare.length < SPARE_CHUNKS) this.spare.push(bytes);
    else this.chunkBytes -= bytes.length;
    this.chunks[index] = null;
    if (index === this.open) this.open = -1;
  }
}
