// The insertion order of an index's vectors, for listing and export. Every
// write of an id takes the next sequence number (the kernel's tie-break
// order, so a replaced vector moves to the end). A log of (seq, id) in
// ascending seq keeps every write; an entry is live while its id still holds
// that seq. A position is a seq, so it keeps its meaning across any writes:
// the log is compacted (dead entries dropped), never reordered. Replaces,
// deletes and clears all make dead entries, so the log stays within twice the
// live ones plus a slack, whatever the churn.
import { stringHeapBytes } from './heap-size.js';

/** Dead entries tolerated before a compaction, beyond as many as there are live ones (and those readers keep). */
const COMPACT_SLACK = 1024;

/**
 * JS heap of one log entry past the live ones (those are in ROW_HEAP_BYTES):
 * a slot in each of two arrays (8 bytes each), grown by 1.5x.
 */
export const LOG_ENTRY_HEAP_BYTES = 24;

/** Tells which dead entries a reader (an open export) still has to visit: those it saved a copy of. */
export type KeepDead = (seq: number) => boolean;

export class InsertionOrder {
  /** `slack`: dead entries tolerated beyond the live ones (tests lower it to compact often). */
  constructor(private readonly slack = COMPACT_SLACK) {}

  private readonly current = new Map<string, number>();
  private logSeqs: number[] = [];
  private logIds: string[] = [];
  private dead = 0;
  /** Dead entries the last compaction kept for readers (the next one waits for as many more). */
  private kept = 0;
  /** Heap of the ids that only dead entries hold (ids deleted or cleared, not stored again in the same string). */
  private deadIdBytes = 0;
  /** Readers (exports) walking the log, each keeping the dead entries it still needs through compactions. */
  private readonly readers = new Set<KeepDead>();

  /** The seq `id` holds, if stored. */
  seqOf(id: string): number | undefined {
    return this.current.get(id);
  }

  /**
   * `id` takes `seq`. Pass the index's own string of a stored id, so the log
   * shares it rather than keeping each request's copy.
   */
  write(id: string, seq: number): void {
    const replaced = this.current.has(id);
    this.current.set(id, seq);
    this.logSeqs.push(seq);
    this.logIds.push(id);
    if (replaced) {
      this.dead++;
      this.maybeCompact();
    }
  }

  remove(id: string): void {
    if (this.current.delete(id)) {
      this.dead++;
      this.deadIdBytes += stringHeapBytes(id);
      this.maybeCompact();
    }
  }

  clear(): void {
    this.dead += this.current.size;
    for (const id of this.current.keys()) this.deadIdBytes += stringHeapBytes(id);
    this.current.clear();
    this.maybeCompact();
  }

  /**
   * Estimated JS heap of the log past one entry per live id (ROW_HEAP_BYTES
   * counts that one): its dead entries and the ids only they hold.
   */
  get heapBytes(): number {
    return (this.logSeqs.length - this.current.size) * LOG_ENTRY_HEAP_BYTES + this.deadIdBytes;
  }

  /** A reader starts walking the log; compactions keep the dead entries `keep` names until the returned function is called. */
  pin(keep: KeepDead): () => void {
    const reader: KeepDead = (seq) => keep(seq);
    this.readers.add(reader);
    return () => {
      if (this.readers.delete(reader)) this.maybeCompact();
    };
  }

  /**
   * Visit log entries with seq in (after, upTo], in order, until `visit`
   * returns false. Live and dead entries alike: the caller tells them apart
   * with seqOf (an export also emits entries it saved before they died).
   */
  walk(after: number, upTo: number, visit: (id: string, seq: number) => boolean): void {
    const seqs = this.logSeqs;
    for (let i = this.firstAfter(after); i < seqs.length && seqs[i] <= upTo; i++) {
      if (!visit(this.logIds[i], seqs[i])) return;
    }
  }

  /** Index of the first log entry with seq > after (binary search: the log is ascending). */
  private firstAfter(after: number): number {
    let lo = 0;
    let hi = this.logSeqs.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.logSeqs[mid] <= after) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /**
   * Compact once the dead entries outnumber the live ones (and those kept
   * last time) by the slack, amortized O(1) a write; at once when nothing is
   * stored or walked any more.
   */
  private maybeCompact(): void {
    const emptied = this.current.size === 0 && this.readers.size === 0;
    if (this.dead === 0 || (!emptied && this.dead <= this.current.size + this.kept + this.slack)) return;
    const seqs: number[] = [];
    const ids: string[] = [];
    let kept = 0;
    let keptIdBytes = 0;
    for (let i = 0; i < this.logSeqs.length; i++) {
      const id = this.logIds[i];
      const seq = this.logSeqs[i];
      const stored = this.current.get(id);
      if (stored !== seq && !this.readerKeeps(seq)) continue;
      seqs.push(seq);
      ids.push(id);
      if (stored === seq) continue;
      kept++;
      keptIdBytes += stringHeapBytes(id); // an upper figure: the id may still be shared with a live entry
    }
    this.logSeqs = seqs;
    this.logIds = ids;
    this.dead = kept;
    this.kept = kept;
    this.deadIdBytes = keptIdBytes;
  }

  private readerKeeps(seq: number): boolean {
    for (const keep of this.readers) if (keep(seq)) return true;
    return false;
  }
}
