// The keys of a ByteDictionary, by id, outside the JS heap: each key is a
// record (its id, its length, its bytes) appended to the open chunk (64 KiB,
// or one key's size if larger). Removing a key leaves a hole; once a chunk is
// half holes it waits in a queue, and each compactStep() copies the live
// records of one such chunk to the open chunk and lets it go. No step copies
// more than a chunk, however many keys the dictionary holds: growing never
// copies the keys already stored.

import { type Chunk, ChunkList, emptyChunk } from './chunk-list.js';
import { PagedArray, pagedLength } from './paged-array.js';

export const CHUNK_BYTES = 64 * 1024;
/** Chunks let go and kept for reuse at most (1 MiB). */
const SPARE_CHUNKS = 16;
/** A record's header: the key's id and length, 4 bytes each (little-endian). */
const HEADER = 8;
const NO_CHUNK = 0xffffffff;

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
  private readonly chunks = new ChunkList<Chunk>(
    (size) => emptyChunk(this.newChunk(size)),
    (chunk) => this.release(chunk.bytes),
  );
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
    const chunks = records <= this.chunks.openFree ? 0 : 2 * records + CHUNK_BYTES;
    return 8 * ids + chunks + CHUNK_BYTES;
  }

  /** Store `bytes[at, at + length)` as the key of `id` (which has none). */
  write(id: number, bytes: Uint8Array, at: number, length: number): void {
    this.chunkOf.ensure(id + 1);
    this.offsetOf.ensure(id + 1);
    const start = this.chunks.reserve(HEADER + length);
    const chunk = this.chunks.get(this.chunks.open);
    writeU32(chunk.bytes, start, id);
    writeU32(chunk.bytes, start + 4, length);
    chunk.bytes.set(bytes.subarray(at, at + length), start + HEADER);
    this.chunkOf.set(id, this.chunks.open);
    this.offsetOf.set(id, start + HEADER);
  }

  /** Let go of the key of `id` (a hole until its chunk is compacted). */
  free(id: number): void {
    this.chunks.freed(this.chunkOf.get(id), HEADER + this.lengthOf(id));
    this.chunkOf.set(id, NO_CHUNK);
  }

  lengthOf(id: number): number {
    return readU32(this.chunks.get(this.chunkOf.get(id)).bytes, this.offsetOf.get(id) - 4);
  }

  /** The key of `id` (a view: read it before the next write, free or step). */
  keyOf(id: number): Uint8Array {
    const bytes = this.chunks.get(this.chunkOf.get(id)).bytes,
      start = this.offsetOf.get(id);
    return bytes.subarray(start, start + readU32(bytes, start - 4));
  }

  /** Byte order of the keys of `a` and `b` from their byte `from` on (negative: `a` first); no view is made. */
  compare(a: number, b: number, from: number): number {
    const x = this.chunks.get(this.chunkOf.get(a)).bytes,
      y = this.chunks.get(this.chunkOf.get(b)).bytes;
    const i = this.offsetOf.get(a),
      j = this.offsetOf.get(b);
    const m = readU32(x, i - 4) - from,
      n = readU32(y, j - 4) - from;
    for (let k = 0, end = Math.min(m, n); k < end; k++) {
      const d = x[i + from + k] - y[j + from + k];
      if (d !== 0) return d;
    }
    return m - n;
  }

  /** Byte order of the key of `id` from its byte `from` on against `bytes` (negative: the key first). */
  compareTo(id: number, from: number, bytes: Uint8Array): number {
    const x = this.chunks.get(this.chunkOf.get(id)).bytes,
      i = this.offsetOf.get(id) + from;
    const m = readU32(x, i - from - 4) - from;
    for (let k = 0, end = Math.min(m, bytes.length); k < end; k++) {
      const d = x[i + k] - bytes[k];
      if (d !== 0) return d;
    }
    return m - bytes.length;
  }

  /** Whether the key of `id` is `bytes[at, at + length)`. */
  equals(id: number, bytes: Uint8Array, length: number, at: number): boolean {
    const keys = this.chunks.get(this.chunkOf.get(id)).bytes,
      start = this.offsetOf.get(id);
    if (readU32(keys, start - 4) !== length) return false;
    for (let i = 0; i < length; i++) if (keys[start + i] !== bytes[at + i]) return false;
    return true;
  }

  /** One step of compaction: the live records of one chunk at least half holes (not the open one) move to the open chunk. */
  compactStep(): void {
    const worst = this.chunks.nextToCompact();
    if (worst < 0) return;
    const from = this.chunks.get(worst);
    for (let at = 0; at < from.used && from.live > 0; ) {
      const id = readU32(from.bytes, at),
        size = HEADER + readU32(from.bytes, at + 4);
      if (this.chunkOf.get(id) === worst && this.offsetOf.get(id) === at + HEADER) this.moveRecord(id, from, at, size);
      at += size;
    }
    this.chunks.drop(worst);
  }

  private moveRecord(id: number, from: Chunk, at: number, size: number): void {
    const to = this.chunks.copy(from, at, size);
    this.chunkOf.set(id, this.chunks.open);
    this.offsetOf.set(id, to + HEADER);
    this.copiedBytes += size;
  }

  /** A chunk of at least `size` bytes: a spare one, or new. */
  private newChunk(size: number): Uint8Array {
    if (size <= CHUNK_BYTES && this.spare.length > 0) return this.spare.pop()!;
    const bytes = new Uint8Array(Math.max(CHUNK_BYTES, size));
    this.chunkBytes += bytes.length;
    return bytes;
  }

  /** Let a chunk go: kept as a spare (still counted) while there are few, else freed. */
  private release(bytes: Uint8Array): void {
    if (bytes.length === CHUNK_BYTES && this.spare.length < SPARE_CHUNKS) this.spare.push(bytes);
    else this.chunkBytes -= bytes.length;
  }
}
