// Each row's metadata as one record of bytes, outside the JS heap: its JSON
// text (UTF-8, exactly JSON.stringify's) and, after it, the ids of the index
// entries the row is in (so a delete needs no parse to find them). Records are
// appended to chunks (ArrayBuffers of 4 KiB doubling to 1 MiB); a typed-array
// table gives each row its chunk, offset and lengths. A row without metadata
// has no record ({}). Replacing or deleting a record leaves a hole; after
// each change, at most one chunk that is half holes is compacted (its live
// records copied to the open chunk, the chunk let go): the work of one step
// is bounded by a chunk, however large the session.

import { type Chunk, ChunkList, emptyChunk } from './chunk-list.js';
import { grown, grownLength } from './typed-arrays.js';

const FIRST_CHUNK_BYTES = 4 * 1024;
const MAX_CHUNK_BYTES = 1024 * 1024;
const NO_CHUNK = 0xffffffff;

const utf8 = new TextDecoder();
const utf8In = new TextEncoder();
const align4 = (n: number) => (n + 3) & ~3;

/** A chunk with a view of its bytes as words (entry ids are 4-aligned). */
interface WordChunk extends Chunk {
  readonly words: Uint32Array;
}

export class MetadataArena {
  private chunkOf = new Uint32Array(0);
  private offsetOf = new Uint32Array(0);
  private jsonLengthOf = new Uint32Array(0);
  private entryCountOf = new Uint32Array(0);
  private readonly chunks = new ChunkList<WordChunk>(
    (size) => this.newChunk(size),
    (chunk) => {
      this.chunkBytes -= chunk.bytes.length;
    },
  );
  private chunkBytes = 0;
  private nextChunkBytes = FIRST_CHUNK_BYTES;

  /** Bytes held: chunks and the row table. */
  get byteLength(): number {
    return this.chunkBytes + this.chunkOf.byteLength + this.offsetOf.byteLength + this.jsonLengthOf.byteLength + this.entryCountOf.byteLength;
  }

  /**
   * The most it can grow by (as allocated) when `records` of `recordBytes`
   * (JSON and entry ids) in all are written and the table reaches `rowsAfter`:
   * nothing past the open chunk's free bytes; else the records, the tails
   * they leave (each at most the record that did not fit) and the last chunk
   * opened (the next size, or at most twice what went into the one before).
   * `holes`: records are replaced or freed, so a compaction step may open a chunk.
   */
  growthUpper(records: number, recordBytes: number, rowsAfter: number, holes: boolean): number {
    const rows = grownLength(this.chunkOf.length, rowsAfter) - this.chunkOf.length;
    const bytes = recordBytes + 4 * records;
    const chunks = records === 0 || bytes <= this.chunks.openFree ? 0 : 2 * bytes + Math.max(this.nextChunkBytes, 2 * bytes);
    const compaction = holes || this.chunks.compactionQueued ? this.nextChunkBytes : 0;
    return 16 * rows + chunks + compaction;
  }

  /** Bytes of metadata JSON stored (holes and entry lists aside). */
  jsonBytes = 0;

  has(row: number): boolean {
    return row < this.chunkOf.length && this.chunkOf[row] !== NO_CHUNK;
  }

  /** UTF-8 bytes of the row's metadata as JSON (2 for {}). */
  jsonLength(row: number): number {
    return this.has(row) ? this.jsonLengthOf[row] : 2;
  }

  /** The row's metadata as JSON text. */
  json(row: number): string {
    return this.has(row) ? utf8.decode(this.jsonBytesOf(row)) : '{}';
  }

  /**
   * The row's JSON bytes (which it has), a view of its chunk: chunks are only
   * appended to and never reused, so the view keeps these bytes whatever
   * the arena does after.
   */
  jsonBytesOf(row: number): Uint8Array {
    const chunk = this.chunks.get(this.chunkOf[row]),
      at = this.offsetOf[row];
    return chunk.bytes.subarray(at, at + this.jsonLengthOf[row]);
  }

  /** The entry ids of the row (a view: read it before the next change). */
  entries(row: number): Uint32Array {
    if (!this.has(row)) return EMPTY_ENTRIES;
    const chunk = this.chunks.get(this.chunkOf[row]);
    const start = (this.offsetOf[row] + align4(this.jsonLengthOf[row])) >>> 2;
    return chunk.words.subarray(start, start + this.entryCountOf[row]);
  }

  /**
   * Store `json` (`jsonLength` UTF-8 bytes) and `entries[0, entryCount)` as
   * the record of `row` (which has none). `quoted`: `json` is a string's
   * characters, written between double quotes (a literal that needs no
   * escape, without making it; `jsonLength` counts the quotes).
   */
  write(row: number, json: string, jsonLength: number, entries: Uint32Array, entryCount: number, quoted = false): void {
    this.ensureRows(row + 1);
    const size = align4(jsonLength) + 4 * entryCount;
    const at = this.chunks.reserve(size);
    const chunk = this.chunks.get(this.chunks.open);
    // A record's text is long: the engine's encoder beats a JS loop (which wins on short keys).
    if (quoted) {
      chunk.bytes[at] = chunk.bytes[at + jsonLength - 1] = 0x22;
      utf8In.encodeInto(json, chunk.bytes.subarray(at + 1, at + jsonLength - 1));
    } else {
      utf8In.encodeInto(json, chunk.bytes.subarray(at, at + jsonLength));
    }
    chunk.words.set(entries.subarray(0, entryCount), (at + align4(jsonLength)) >>> 2);
    this.chunkOf[row] = this.chunks.open;
    this.offsetOf[row] = at;
    this.jsonLengthOf[row] = jsonLength;
    this.entryCountOf[row] = entryCount;
    this.jsonBytes += jsonLength;
  }

  /** Let go of the record of `row` (a hole until its chunk is compacted). */
  free(row: number): void {
    if (!this.has(row)) return;
    this.chunks.freed(this.chunkOf[row], align4(this.jsonLengthOf[row]) + 4 * this.entryCountOf[row]);
    this.jsonBytes -= this.jsonLengthOf[row];
    this.chunkOf[row] = NO_CHUNK;
  }

  /** The record of `from` becomes the record of `to` (which has none); `from` has none after. */
  move(from: number, to: number): void {
    if (!this.has(from)) return;
    this.ensureRows(to + 1);
    this.chunkOf[to] = this.chunkOf[from];
    this.offsetOf[to] = this.offsetOf[from];
    this.jsonLengthOf[to] = this.jsonLengthOf[from];
    this.entryCountOf[to] = this.entryCountOf[from];
    this.chunkOf[from] = NO_CHUNK;
  }

  /**
   * One step of compaction: a chunk at least half holes (not the open one)
   * has its live records copied to the open chunk and is let go. `rows`: the
   * rows in use (a row's record may be in any chunk).
   */
  compactStep(rows: number): void {
    const worst = this.chunks.nextToCompact();
    if (worst < 0) return;
    const from = this.chunks.get(worst);
    for (let row = 0; row < rows && from.live > 0; row++) {
      if (this.chunkOf[row] !== worst) continue;
      const size = align4(this.jsonLengthOf[row]) + 4 * this.entryCountOf[row];
      this.offsetOf[row] = this.chunks.copy(from, this.offsetOf[row], size);
      this.chunkOf[row] = this.chunks.open;
    }
    this.chunks.drop(worst);
  }

  clear(): void {
    this.chunkOf = new Uint32Array(0);
    this.offsetOf = new Uint32Array(0);
    this.jsonLengthOf = new Uint32Array(0);
    this.entryCountOf = new Uint32Array(0);
    this.chunks.clear();
    this.chunkBytes = 0;
    this.jsonBytes = 0;
    this.nextChunkBytes = FIRST_CHUNK_BYTES;
  }

  /** A chunk of at least `size` bytes (4-aligned for the entry ids): the next size, doubling up to 1 MiB. */
  private newChunk(size: number): WordChunk {
    const bytes = new Uint8Array(Math.max(this.nextChunkBytes, align4(size)));
    this.nextChunkBytes = Math.min(MAX_CHUNK_BYTES, this.nextChunkBytes * 2);
    this.chunkBytes += bytes.length;
    return { ...emptyChunk(bytes), words: new Uint32Array(bytes.buffer) };
  }

  private ensureRows(rows: number): void {
    if (rows <= this.chunkOf.length) return;
    this.chunkOf = grown(this.chunkOf, rows, NO_CHUNK);
    this.offsetOf = grown(this.offsetOf, rows);
    this.jsonLengthOf = grown(this.jsonLengthOf, rows);
    this.entryCountOf = grown(this.entryCountOf, rows);
  }
}

const EMPTY_ENTRIES = new Uint32Array(0);
