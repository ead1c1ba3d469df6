// Copy-on-write export snapshots: an open export walks the insertion order up
// to where it was when opened; a vector it has yet to reach that is about to
// change (replace, delete, clear, set metadata) is copied aside first, so the
// export yields every vector as it was, and memory stays small.
import type { IndexRead } from './index-read.js';
import { rowHeapBytes } from './row-table.js';
import type { ExportedVector, IndexExport } from './types.js';

/** The part of the log an open export has yet to emit, and copies of its vectors changed since it opened. */
interface OpenExport {
  position: number;
  readonly upTo: number;
  readonly saved: Map<number, { vector: ExportedVector; bytes: number }>;
  /** Told the estimated bytes of each copy kept, and (negative) of each one let go. */
  readonly onCopies?: (bytes: number) => void;
}

/** A Float32Array's own object, beside its values. */
const TYPED_ARRAY_BYTES = 96;

/** A MetadataJson and its Uint8Array view. */
const METADATA_VIEW_BYTES = 160;

export class ExportSnapshots {
  private readonly open = new Set<OpenExport>();

  constructor(private readonly index: IndexRead) {}

  /** Whether any export is open (then every change copies what it would lose first). */
  get any(): boolean {
    return this.open.size > 0;
  }

  /** A consistent snapshot of every vector now stored (see IndexExport; VectorIndex.openExport). */
  openExport(onCopies?: (bytes: number) => void): IndexExport {
    const { index } = this;
    const order = index.rows.order;
    // The records live when it opens: one expired by then is left out, a copy made later included.
    const openedAt = index.clock();
    const expired = (vector: ExportedVector) => vector.expiresAt !== undefined && vector.expiresAt <= openedAt;
    const open: OpenExport = { position: -1, upTo: index.rows.nextSeq - 1, saved: new Map(), onCopies };
    this.open.add(open);
    // Compactions keep the entries of the copies it saved, so it emits them in order.
    const unpin = order.pin((seq) => open.saved.has(seq));
    let closed = false;
    const close = () => {
      if (closed) return;
      closed = true;
      this.open.delete(open);
      unpin();
      let kept = 0;
      for (const copy of open.saved.values()) kept += copy.bytes;
      open.saved.clear();
      if (kept > 0) onCopies?.(-kept);
    };
    const next = (max: number): ExportedVector[] => {
      const out: ExportedVector[] = [];
      if (closed) return out;
      order.walk(open.position, open.upTo, (id, seq) => {
        const saved = open.saved.get(seq);
        if (saved) {
          open.saved.delete(seq);
          onCopies?.(-saved.bytes);
          if (!expired(saved.vector)) out.push(saved.vector);
        } else if (order.seqOf(id) === seq) {
          const exported = this.exportedRow(index.rows.rowOf(id)!);
          if (!expired(exported)) out.push(exported);
        }
        open.position = seq;
        return out.length < max;
      });
      if (out.length === 0) close();
      return out;
    };
    return { config: index.config, count: index.rows.size - index.expiry.expiredCount(openedAt, index.rows.size), next, close };
  }

  /** Before the vector `id` (at `row`) changes: open exports yet to reach its current version keep a copy. */
  beforeChange(id: string, row: number): void {
    if (this.open.size === 0) return;
    const { index } = this;
    const seq = index.rows.order.seqOf(id);
    if (seq === undefined) return;
    for (const open of this.open) {
      if (seq > open.position && seq <= open.upTo && !open.saved.has(seq)) {
        // The copy's values, its id, and its metadata (a view of its record, which keeps the record's bytes alive).
        const textBytes = index.texts.has(row) ? METADATA_VIEW_BYTES + index.texts.jsonLength(row) : 0;
        const bytes = index.kernel!.dim * 4 + TYPED_ARRAY_BYTES + rowHeapBytes(id) + METADATA_VIEW_BYTES + index.metadata.jsonLength(row) + textBytes;
        open.saved.set(seq, { vector: this.exportedRow(row), bytes });
        open.onCopies?.(bytes);
      }
    }
  }

  private exportedRow(row: number): ExportedVector {
    const { index } = this;
    const exported: ExportedVector = { id: index.rows.idAt(row), vector: index.kernel!.readRow(row), metadata: index.metadata.json(row) };
    const text = index.texts.json(row);
    if (text) exported.text = text;
    const ttl = index.expiry.ttlOf(row);
    if (ttl) Object.assign(exported, ttl);
    return exported;
  }
}
