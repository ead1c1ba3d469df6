// A reopen's replay: applyChange turns each logged record into the changes
// the index applies (index/changes.ts, which live writes apply too). A
// snapshot (compaction, a rewrite after a failed fsync) is written as records
// that replay to the session as it was in memory. Replayed rows go in steps
// of rowsPerStep with a pause between, each written in slices, so a large
// record keeps no step long.
import { rememberJsonText } from '../../index/json-size.js';
import { applyToIndex } from '../../index/changes.js';
import type { Metadata } from '../../index/filter.js';
import type { UpsertOptions, VectorInput } from '../../index/types.js';
import type { VectorIndex } from '../../index/vector-index.js';
import type { Session } from '../session.js';
import type { RecordV2, Rows, RowsHead } from './records-v2.js';
import type { Slices } from '../../limits/slices.js';

/** A logged change, as a record holds it. */
export type Change = Exclude<RecordV2, { t: 'open' | 'synced' }>;

/** Vector bytes per step of a replay, and per record of a snapshot. */
const VECTOR_BYTES_PER_STEP = 512 * 1024;

/** Rows of `dimensions` float32 components in one snapshot record (or one step of a replay). */
export function rowsPerStep(dimensions: number): number {
  return Math.max(1, Math.min(1000, Math.floor(VECTOR_BYTES_PER_STEP / (4 * dimensions))));
}

const fromUtf8 = new TextDecoder();

/** Metadata from its JSON bytes; the index then stores the same text without making it again. */
export function parseMetadata(bytes: Uint8Array): Metadata {
  const text = fromUtf8.decode(bytes);
  const value = JSON.parse(text) as Metadata;
  rememberJsonText(value, text, bytes.length);
  return value;
}

/** Rows [from, to) of a record as the index takes them (vectors are views of the record's rows). */
function inputs(rows: RowsHead & Rows, from: number, to: number): VectorInput[] {
  const dim = rows.dimensions;
  const out = new Array<VectorInput>(to - from);
  for (let i = from; i < to; i++) {
    const metadata = rows.metadata[i];
    const text = rows.text?.[i];
    const ttl = rows.ttls?.[i];
    out[i - from] = {
      id: rows.ids[i],
      vector: rows.rows.subarray(i * dim, (i + 1) * dim),
      metadata: metadata ? parseMetadata(metadata) : undefined,
      // A text is stored as the JSON string literal the index keeps.
      ...(text ? { text: JSON.parse(fromUtf8.decode(text)) as string } : {}),
      // The expiry as logged, absolute: a record expired since is replayed expired (left out of every read, then swept).
      ...(ttl ? { ttlMs: ttl.ttlMs, expiresAt: ttl.expiresAt } : {}),
    };
  }
  return out;
}

/** Ids of [from, to) that the index does not hold yet. */
function newIds(index: VectorIndex, ids: string[], from: number, to: number): number {
  let count = 0;
  for (let i = from; i < to; i++) if (!index.has(ids[i])) count++;
  return count;
}

/** Apply one logged change to `session` through applyToIndex, an add's rows in slices (a reopen's replay; an import's parts arrive here one at a time, once all are known to be whole). */
export async function applyChange(session: Session, change: Change, slices: Slices): Promise<void> {
  const { index } = session;
  switch (change.t) {
    case 'upsert':
    case 'import': {
      const { dimensions, metric, vectorType, analyzer, embedding } = change;
      // writtenAt: no bound on a logged expiry (each was checked when written, whatever the clock reads now).
      const options: UpsertOptions = {
        dimensions,
        metric,
        vectorType,
        writtenAt: Number.POSITIVE_INFINITY,
        ...(analyzer ? { analyzer } : {}),
        ...(embedding ? { embedding } : {}),
      };
      const step = rowsPerStep(dimensions);
      for (let i = 0; i < change.ids.length; i += step) {
        // Acknowledged rows are replayed even past a MAX_VECTORS_PER_SESSION lowered since.
        index.allowRows(index.size + newIds(index, change.ids, i, Math.min(change.ids.length, i + step)));
        // Wide metadata or long texts make even a step's rows long to write: they go in slices too.
        const plan = index.prepareUpsert(inputs(change, i, Math.min(change.ids.length, i + step)), options);
        await index.applyUpsertSliced(plan, slices);
        await slices.pause();
      }
      break;
    }
    case 'metadata':
      applyToIndex(index, { t: 'metadata', id: change.id, metadata: change.metadata.length > 0 ? parseMetadata(change.metadata) : {} });
      break;
    case 'delete':
      applyToIndex(index, { t: 'delete', ids: change.ids });
      break;
    case 'renew':
      applyToIndex(index, { t: 'renew', ids: change.ids, expiresAt: change.expiresAt });
      break;
    case 'clear':
    case 'reset':
      applyToIndex(index, { t: change.t === 'clear' ? 'clear' : 'reset' });
      break;
    case 'touch':
      break;
  }
  if (change.t !== 'touch') session.markUpdated(change.at);
  session.touch(Math.max(session.lastAccessedAt, change.at));
}
