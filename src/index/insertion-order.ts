// The insertion order of an index's vectors, for listing and export. Every
// write of an id takes the next sequence number (the kernel's tie-break
// order, so a replaced vector moves to the end). A log of (seq, id) in
// ascending seq keeps every write; an entry is live while its id still holds
// that seq. A position is a seq, so it keeps its meaning across any writes:
// the log is compacted (dead entries dropped), never reordered.

/** Dead entries tolerated before a compaction, beyond as many as there are live ones. */
const COMPACT_SLACK = 1024;

export class InsertionOrder {
  private readonly current = new Map<string, number>();
  private logSeqs: number[] = [];
  private logIds: string[] = [];
  private dead = 0;
  /** Readers (exports) walking the log: no compaction while any is open. */
  private pins = 0;

  /** The seq `id` holds, if stored. */
  seqOf(id: string): number | undefined {
    return this.current.get(id);
  }

  write(id: string, seq: number): void {
    if (this.current.has(id)) this.dead++;
    this.current.set(id, seq);
    this.logSeqs.push(seq);
    this.logIds.push(id);
  }

  remove(id: string): void {
    if (this.current.delete(id)) {
      this.dead++;
      this.maybeCompact();
    }
  }

  clear(): void {
    this.dead += this.current.size;
    this.current.clear();
    this.maybeCompact();
  }

  pin(): void {
    this.pins++;
  }

  unpin(): void {
    this.pins--;
    this.maybeCompact();
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

  private maybeCompact(): void {
    if (this.pins > 0 || this.dead <= this.current.size + COMPACT_SLACK) return;
    const seqs: number[] = [];
    const ids: string[] = [];
    for (let i = 0; i < this.logSeqs.length; i++) {
      if (this.current.get(this.logIds[i]) === this.logSeqs[i]) {
        seqs.push(this.logSeqs[i]);
        ids.push(this.logIds[i]);
      }
    }
    this.logSeqs = seqs;
    this.logIds = ids;
    this.dead = 0;
  }
}
