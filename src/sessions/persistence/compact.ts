// Compaction of a session log: the same session in as few records as
// possible. Replaying the result gives the same vectors, metadata,
// configuration, timestamps and search tie-break order (ties go to the
// vector written first, so live vectors are rewritten in the order of their
// last write).
import type { Metric, VectorType } from '../../config.js';
import type { Metadata } from '../../index/vector-index.js';
import { ImportParts, type ChangeEntry, type LogEntry } from './session-journal.js';

/** Vector bytes per compacted upsert: small records keep each step of a sliced reopen or compaction short. */
const VECTOR_BYTES_PER_UPSERT = 192 * 1024;

interface LiveRecord { id: string; v: string; m?: Metadata; order: number }

export function compactEntries(entries: readonly LogEntry[]): LogEntry[] {
  const [open, ...changes] = entries;
  if (!open || open.t !== 'open') throw new Error('a log starts with its open record');
  let config: { dimensions: number; metric: Metric; vectorType?: VectorType } | null = null;
  let lastWritten: { id: string; v: string } | null = null;
  const live = new Map<string, LiveRecord>();
  let order = 0;
  let updatedAt = open.createdAt;
  let lastAccess = open.createdAt;
  const imported = new ImportParts();
  /** Parts of an import still being written (compaction can run between two of its appends): kept as they are. */
  let importInProgress: LogEntry[] = [];

  for (const entry of changes as (ChangeEntry | Extract<LogEntry, { t: 'synced' }>)[]) {
    if (entry.t === 'synced') continue; // the compacted file is fsynced whole
    lastAccess = Math.max(lastAccess, entry.at);
    if (entry.t !== 'touch') updatedAt = entry.at;
    switch (entry.t) {
      case 'upsert':
      case 'import': {
        // An import counts once all its parts are in (a crash may have cut the last ones off).
        const records = entry.t === 'import' ? imported.add(entry) : entry.records;
        if (entry.t === 'import') importInProgress = records ? [] : [...importInProgress, entry];
        if (!records) break;
        config = { dimensions: entry.dimensions, metric: entry.metric, vectorType: entry.vectorType };
        for (const r of records) {
          live.set(r.id, { id: r.id, v: r.v, m: r.m, order: order++ });
          lastWritten = r;
        }
        break;
      }
      case 'metadata': {
        const record = live.get(entry.id);
        if (record) record.m = entry.metadata;
        break;
      }
      case 'delete':
        for (const id of entry.ids) live.delete(id);
        break;
      case 'clear':
        live.clear();
        break;
      case 'reset':
        live.clear();
        config = null;
        break;
    }
  }

  const out: LogEntry[] = [open];
  if (config) {
    const rows = [...live.values()].sort((a, b) => a.order - b.order).map(({ id, v, m }) => ({ id, v, m }));
    const perRecord = rowsPerStep(config.dimensions);
    for (let i = 0; i < rows.length; i += perRecord) {
      out.push({ t: 'upsert', at: updatedAt, ...config, records: rows.slice(i, i + perRecord) });
    }
    if (rows.length === 0 && lastWritten) {
      // Initialized but empty: one vector fixes dimension and metric, a clear removes it.
      out.push({ t: 'upsert', at: updatedAt, ...config, records: [lastWritten] }, { t: 'clear', at: updatedAt });
    }
  } else if (updatedAt > open.createdAt) {
    out.push({ t: 'reset', at: updatedAt }); // a no-op that keeps updatedAt
  }
  if (lastAccess > updatedAt) out.push({ t: 'touch', at: lastAccess });
  out.push(...importInProgress);
  return out;
}

/** Rows of `dimensions` float32 components in one compacted record (or one step of a replay). */
export function rowsPerStep(dimensions: number): number {
  return Math.max(1, Math.min(1000, Math.floor(VECTOR_BYTES_PER_UPSERT / (4 * dimensions))));
}
