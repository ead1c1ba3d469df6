// A session as it is in memory, as log entries: what a log is rewritten to
// after a failed fsync, when the page cache may no longer hold what the disk
// does (PostgreSQL's "fsyncgate"), so the old log cannot be read back to make
// it. Replaying the entries gives the same vectors, metadata, configuration,
// timestamps and tie-break order (rows in insertion order, as compaction
// writes them).
import type { Session } from '../session.js';
import { rowsPerStep } from './compact.js';
import { float32ToBase64 } from './records.js';
import type { LogEntry, LogRecord } from './session-journal.js';

/** The entries one at a time (a batch of rows each), so a caller can write them in slices. */
export function* snapshotEntries(session: Session): Generator<LogEntry> {
  const { index } = session;
  yield { t: 'open', v: 1, sessionId: session.id, createdAt: session.createdAt };
  const at = session.updatedAt;
  const { dimensions, metric, vectorType } = index.getConfig();
  if (dimensions !== null && metric !== null) {
    const head = { t: 'upsert' as const, at, dimensions, metric, vectorType };
    const rows = index.openExport();
    try {
      for (let batch = rows.next(rowsPerStep(dimensions)); batch.length > 0; batch = rows.next(rowsPerStep(dimensions))) {
        const records: LogRecord[] = batch.map((row) => ({ id: row.id, v: float32ToBase64(row.vector), m: row.metadata.value() }));
        yield { ...head, records };
      }
    } finally {
      rows.close();
    }
    if (index.size === 0) {
      // Configured but empty: one vector fixes dimensions and metric, a clear removes it.
      yield { ...head, records: [{ id: 'configured', v: float32ToBase64(new Float32Array(dimensions).fill(1)) }] };
      yield { t: 'clear', at };
    }
  } else if (at > session.createdAt) {
    yield { t: 'reset', at }; // a no-op that keeps updatedAt
  }
  if (session.lastAccessedAt > at) yield { t: 'touch', at: session.lastAccessedAt };
}
