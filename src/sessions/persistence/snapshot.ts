// A session as it is in memory, as log records: what compaction writes (then
// the changes that arrived meanwhile), and what a log is rewritten to after a
// failed fsync, when the page cache may no longer hold what the disk does
// (PostgreSQL's "fsyncgate"), so the old log cannot be read back to make it.
// Rows come from an IndexExport (a consistent view of the index at the
// moment it was opened, read a batch at a time), metadata as the arena's
// JSON bytes: no parse of the old log, no JS object per stored row beyond a
// batch. Replaying the records gives the same vectors, metadata,
// configuration, timestamps and tie-break order (rows in insertion order).
import type { RowTtl } from '../../index/row-expiry.js';
import type { ExportedVector, IndexExport } from '../../index/types.js';
import { rowsPerStep } from './change.js';
import { encodeRecordV2, encodeRows, fileHeader, type RowsHead } from './records-v2.js';

/** What a snapshot records besides the rows, taken at the same moment as its export. */
export interface SnapshotState {
  sessionId: string;
  createdAt: number;
  updatedAt: number;
  lastAccessedAt: number;
  /** The sequence of the last record the snapshot holds the change of (every record of it carries it). */
  sequence: number;
}

/** An exported row's ttl and expiry, as a log record keeps them (null: none). */
function rowTtl(row: ExportedVector): RowTtl | null {
  return row.ttlMs !== undefined && row.expiresAt !== undefined ? { ttlMs: row.ttlMs, expiresAt: row.expiresAt } : null;
}

/** The snapshot's bytes, a record (a batch of rows) at a time, starting with the file header; closes `rows`. */
export function* snapshotRecords(state: SnapshotState, rows: IndexExport): Generator<Buffer> {
  const { sequence } = state;
  const at = state.updatedAt;
  try {
    yield fileHeader();
    yield encodeRecordV2({ t: 'open', sessionId: state.sessionId, createdAt: state.createdAt }, sequence);
    const { dimensions, metric, vectorType, analyzer, embedding } = rows.config;
    if (dimensions !== null && metric !== null) {
      const head: RowsHead & { t: 'upsert' } = { t: 'upsert', at, dimensions, metric, vectorType, analyzer, embedding };
      const step = rowsPerStep(dimensions);
      for (let batch = rows.next(step); batch.length > 0; batch = rows.next(step)) {
        yield encodeRows(
          head,
          {
            count: batch.length,
            id: (i) => batch[i].id,
            vector: (i) => batch[i].vector,
            metadata: (i) => batch[i].metadata.bytes,
            text: batch.some((row) => row.text) ? (i) => batch[i].text?.bytes ?? null : undefined,
            ttl: batch.some((row) => row.ttlMs !== undefined) ? (i) => rowTtl(batch[i]) : undefined,
          },
          sequence,
        );
      }
      if (rows.count === 0) {
        // Configured but empty: one vector fixes dimensions and metric, a clear removes it.
        const one = new Float32Array(dimensions).fill(1);
        yield encodeRows(head, { count: 1, id: () => 'configured', vector: () => one, metadata: () => null }, sequence);
        yield encodeRecordV2({ t: 'clear', at }, sequence);
      }
    } else if (at > state.createdAt) {
      yield encodeRecordV2({ t: 'reset', at }, sequence); // a no-op that keeps updatedAt
    }
    if (state.lastAccessedAt > at) yield encodeRecordV2({ t: 'touch', at: state.lastAccessedAt }, sequence);
  } finally {
    rows.close();
  }
}
