// Posting lists as byte slices in 32 KiB blocks, after Lucene's
// ByteBlockPool: a list starts in a slice of 8 bytes and each next slice is
// twice the size of the one before, up to 512; a slice's first 4 bytes link
// to the next. A list is only appended to, so all it wastes is the free end
// of its last slice (and no block is ever copied to grow).
//
// A posting is a document id as the gap from the list's previous one and the
// term's count in it: varint(gap << 1 | (tf === 1)), then varint(tf) when
// tf > 1. Lists are in ascending document order, so most postings are 1 or 2
// bytes, not the 6 of a Uint32 id and a Uint16 count.

import { grown } from '../metadata/typed-arrays.js';
import { runSteps } from '../../limits/steps.js';

const BLOCK_BITS = 15;
const BLOCK_BYTES = 1 << BLOCK_BITS;
const OFFSET_MASK = BLOCK_BYTES - 1;
const SLICE_BYTES = [8, 16, 32, 64, 128, 256, 512];
const LAST_LEVEL = SLICE_BYTES.length - 1;
const LINK_BYTES = 4;

export class PostingSlices {
  private blocks: Uint8Array[] = [];
  /** Bytes used in the last block. */
  private top = BLOCK_BYTES;
  /** Per list: its first slice, where it is written next, the end of its last slice, that slice's level, its last document. */
  private head = new Uint32Array(16);
  private writeAt = new Uint32Array(16);
  private sliceEnd = new Uint32Array(16);
  private level = new Uint8Array(16);
  private lastDoc = new Uint32Array(16);

  get byteLength(): number {
    return (
      this.blocks.length * BLOCK_BYTES +
      this.head.byteLength +
      this.writeAt.byteLength +
      this.sliceEnd.byteLength +
      this.level.byteLength +
      this.lastDoc.byteLength
    );
  }

  /** Room for lists below `limit`, a pause after each per-list array grown (each is megabytes at a million lists). */
  *reserveSteps(limit: number): Generator<void, void, void> {
    // Each array on its own, so one left halfway is finished by the next call.
    if (limit > this.head.length) {
      this.head = grown(this.head, limit);
      yield;
    }
    if (limit > this.writeAt.length) {
      this.writeAt = grown(this.writeAt, limit);
      yield;
    }
    if (limit > this.sliceEnd.length) {
      this.sliceEnd = grown(this.sliceEnd, limit);
      yield;
    }
    if (limit > this.level.length) {
      this.level = grown(this.level, limit);
      yield;
    }
    if (limit > this.lastDoc.length) {
      this.lastDoc = grown(this.lastDoc, limit);
      yield;
    }
  }

  /** Start list `id` empty (a new term, or an id handed out again). */
  start(id: number): void {
    // lastDoc is grown last: room in it is room in every per-list array.
    if (id >= this.lastDoc.length) {
      runSteps(this.reserveSteps(id + 1));
    }
    const slice = this.allocate(SLICE_BYTES[0]);
    this.head[id] = slice;
    this.writeAt[id] = slice + LINK_BYTES;
    this.sliceEnd[id] = slice + SLICE_BYTES[0];
    this.level[id] = 0;
    this.lastDoc[id] = 0;
  }

  /** Append (doc, tf) to list `id`; `doc` is above every document already in it. */
  append(id: number, doc: number, tf: number): void {
    const gap = doc - this.lastDoc[id];
    this.lastDoc[id] = doc;
    // gap * 2 + flag, as a number: a gap of 2^31 or more must not overflow 32-bit arithmetic.
    this.writeVarint(id, gap * 2 + (tf === 1 ? 1 : 0));
    if (tf !== 1) this.writeVarint(id, tf);
  }

  /**
   * The postings of list `id`, in order, into `docs` and `tfs` (each at
   * least as long as the list); how many. One loop, no call per posting:
   * keyword search reads every posting of its terms through here.
   */
  read(id: number, docs: Uint32Array, tfs: Uint32Array): number {
    const stop = this.writeAt[id];
    let slice = this.head[id],
      level = 0;
    let bytes = this.blocks[slice >>> BLOCK_BITS];
    let base = slice - (slice & OFFSET_MASK);
    let at = (slice & OFFSET_MASK) + LINK_BYTES,
      end = (slice & OFFSET_MASK) + SLICE_BYTES[0];
    // Byte by byte: a varint is done at a byte below 0x80; after a doc gap flagged tf > 1 comes the tf's varint.
    let n = 0,
      doc = 0,
      value = 0,
      shift = 1,
      tfNext = false;
    while (base + at !== stop) {
      if (at === end) {
        const link = at - SLICE_BYTES[level];
        slice = (bytes[link] | (bytes[link + 1] << 8) | (bytes[link + 2] << 16) | (bytes[link + 3] << 24)) >>> 0;
        if (level < LAST_LEVEL) level++;
        bytes = this.blocks[slice >>> BLOCK_BITS];
        base = slice - (slice & OFFSET_MASK);
        at = (slice & OFFSET_MASK) + LINK_BYTES;
        end = (slice & OFFSET_MASK) + SLICE_BYTES[level];
      }
      const byte = bytes[at++];
      value += (byte & 0x7f) * shift;
      shift *= 128;
      if (byte >= 0x80) continue;
      if (tfNext) {
        tfs[n++] = value;
        tfNext = false;
      } else {
        doc += Math.floor(value / 2);
        docs[n] = doc;
        if (value % 2 === 1) tfs[n++] = 1;
        else tfNext = true;
      }
      value = 0;
      shift = 1;
    }
    return n;
  }

  private writeVarint(id: number, value: number): void {
    let rest = value;
    while (rest >= 0x80) {
      this.writeByte(id, (rest % 128) | 0x80);
      rest = Math.floor(rest / 128);
    }
    this.writeByte(id, rest);
  }

  private writeByte(id: number, byte: number): void {
    let at = this.writeAt[id];
    if (at === this.sliceEnd[id]) {
      const level = Math.min(this.level[id] + 1, LAST_LEVEL);
      const slice = this.allocate(SLICE_BYTES[level]);
      // Link the full slice to the new one.
      const from = at - SLICE_BYTES[this.level[id]];
      const bytes = this.blocks[from >>> BLOCK_BITS],
        offset = from & OFFSET_MASK;
      bytes[offset] = slice & 0xff;
      bytes[offset + 1] = (slice >>> 8) & 0xff;
      bytes[offset + 2] = (slice >>> 16) & 0xff;
      bytes[offset + 3] = slice >>> 24;
      this.level[id] = level;
      this.sliceEnd[id] = slice + SLICE_BYTES[level];
      at = slice + LINK_BYTES;
    }
    this.blocks[at >>> BLOCK_BITS][at & OFFSET_MASK] = byte;
    this.writeAt[id] = at + 1;
  }

  /** A slice of `size` bytes (zeroed), never across blocks. */
  private allocate(size: number): number {
    if (this.top + size > BLOCK_BYTES) {
      this.blocks.push(new Uint8Array(BLOCK_BYTES));
      this.top = 0;
    }
    const slice = (this.blocks.length - 1) * BLOCK_BYTES + this.top;
    this.top += size;
    return slice;
  }
}
