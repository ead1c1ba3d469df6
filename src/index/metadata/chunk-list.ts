// The chunks of an arena of records and their bookkeeping: records are
// appended to the open chunk; freeing one leaves a hole; a chunk (not the
// open one) that is half holes waits in a queue for a compaction step, and one
// with no record left is let go at once. The arena says how a chunk is made
// and let go (its sizes and byte accounting) and where its records are.

export interface Chunk {
  readonly bytes: Uint8Array;
  /** Bytes appended so far. */
  used: number;
  /** Bytes of records still in use. */
  live: number;
  /** Waiting in the half-empty queue for a compaction step. */
  queued: boolean;
}

/** A chunk of `bytes` with nothing appended yet. */
export const emptyChunk = (bytes: Uint8Array): Chunk => ({ bytes, used: 0, live: 0, queued: false });

export class ChunkList<C extends Chunk> {
  private chunks: (C | null)[] = [];
  /** Chunks (not the open one) at least half holes, to compact. */
  private halfEmpty: number[] = [];
  /** Where records are appended (-1: none yet). */
  private openIndex = -1;

  /**
   * `make(size)`: a chunk of at least `size` bytes; `release(chunk)`: the
   * chunk is no longer in the list.
   */
  constructor(
    private readonly make: (size: number) => C,
    private readonly release: (chunk: C) => void,
  ) {}

  get(index: number): C {
    return this.chunks[index]!;
  }

  /** The index of the open chunk, where `reserve` appended last. */
  get open(): number {
    return this.openIndex;
  }

  /** Bytes free at the end of the open chunk. */
  get openFree(): number {
    const open = this.openIndex >= 0 ? this.chunks[this.openIndex]! : null;
    return open ? open.bytes.length - open.used : 0;
  }

  /** Whether a chunk may be waiting for compaction. */
  get compactionQueued(): boolean {
    return this.halfEmpty.length > 0;
  }

  /** Room for a record of `size` bytes at the end of the open chunk (a new one if need be): its offset there. */
  reserve(size: number): number {
    const chunk = this.chunks[this.room(size)]!;
    const at = chunk.used;
    chunk.used += size;
    chunk.live += size;
    return at;
  }

  /** Copy the record of `size` bytes at `at` in `from` to the open chunk: its offset there. */
  copy(from: C, at: number, size: number): number {
    const to = this.reserve(size);
    this.chunks[this.openIndex]!.bytes.set(from.bytes.subarray(at, at + size), to);
    from.live -= size;
    return to;
  }

  /** A record of `size` bytes in chunk `index` is a hole now. */
  freed(index: number, size: number): void {
    const chunk = this.chunks[index]!;
    chunk.live -= size;
    if (index === this.openIndex) return;
    if (chunk.live === 0) this.drop(index);
    else this.queueIfHalfEmpty(index);
  }

  /** The next chunk to compact (its live records copied, then dropped), or -1. */
  nextToCompact(): number {
    let worst = -1;
    while (worst < 0 && this.halfEmpty.length > 0) {
      const index = this.halfEmpty.pop()!;
      const chunk = this.chunks[index];
      if (chunk?.queued && index !== this.openIndex) worst = index;
      if (chunk) chunk.queued = false;
    }
    return worst;
  }

  drop(index: number): void {
    this.release(this.chunks[index]!);
    this.chunks[index] = null;
    if (index === this.openIndex) this.openIndex = -1;
  }

  /** Forget every chunk (without releasing them). */
  clear(): void {
    this.chunks = [];
    this.halfEmpty = [];
    this.openIndex = -1;
  }

  /** The index of a chunk with `size` free bytes at its end: the open one, or a new one made open. */
  private room(size: number): number {
    const open = this.openIndex >= 0 ? this.chunks[this.openIndex]! : null;
    if (open && open.used + size <= open.bytes.length) return this.openIndex;
    const was = this.openIndex;
    if (open && open.live === 0) this.drop(was);
    const chunk = this.make(size);
    let index = this.chunks.indexOf(null);
    if (index < 0) index = this.chunks.length;
    this.chunks[index] = chunk;
    this.openIndex = index;
    if (was >= 0 && this.chunks[was]) this.queueIfHalfEmpty(was);
    return index;
  }

  private queueIfHalfEmpty(index: number): void {
    const chunk = this.chunks[index]!;
    if (chunk.queued || (chunk.used - chunk.live) * 2 < chunk.bytes.length) return;
    chunk.queued = true;
    this.halfEmpty.push(index);
  }
}
