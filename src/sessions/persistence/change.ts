// One definition of applying a change: applyToIndex takes a change as the
// index applies it (an add's checked plan, a metadata object, ids), for live
// writes (session-writes.ts, after logging it) and for a reopen's replay
// (applyChange, which turns each logged record into such changes). A
// snapshot (compaction, a rewrite after a failed fsync) is written as records
// that replay to the session as it was in memory. Replayed rows go in steps
// of rowsPerStep with a pause between, each written in slices, so a large
// record keeps no step long.
import { rememberJsonText } from '../../index/json-size.js';
import type { Metadata } from '../../index/filter.js';
import type { UpsertPlan, UpsertResult, VectorInput } from '../../index/types.js';
import type { VectorIndex } from '../../index/vector-index.js';
import type { Session } from '../session.js';
import type { RecordV2, Rows, RowsHead } from './records-v2.js';
import type { Slices } from '../../limits/slices.js';

/** A logged change, as a record holds it. */
export type Change = Exclude<RecordV2, { t: 'open' | 'synced' }>;

/** A change as the index applies it: an add or import as its checked plan, metadata as an object. */
export type IndexChange =
  | { t: 'upsert' | 'import'; plan: UpsertPlan }
  | { t: 'metadata'; id: string; metadata: Metadata }
  | { t: 'delete'; ids: string[] }
  | { t: 'clear' | 'reset' };

/** What applying each kind of change gives. */
export interface ChangeResults {
  upsert: UpsertResult;
  import: UpsertResult;
  /** False when there is no such vector. */
  metadata: boolean;
  delete: { deleted: number; notFound: string[] };
  /** Vectors removed. */
  clear: number;
  reset: number;
}

/**
 * Apply `change` to `index`. `log` (live writes: the journal) runs first,
 * once nothing can fail for want of memory (an add's memory is grown before
 * it); if it throws, nothing changes; if it returns a promise (a change
 * logged in pieces), the change is applied once that settles, and not if it
 * rejects. With `slices`, a large add or import is written in slices that
 * give the event loop back (a promise until its last row is in; reads wait
 * for it: VectorIndex.applying).
 */
export function applyToIndex<C extends IndexChange>(
  index: VectorIndex,
  change: C,
  log?: () => Promise<void> | undefined,
  slices?: Slices,
): ChangeResults[C['t']] | Promise<ChangeResults[C['t']]> {
  type Result = ChangeResults[C['t']];
  if (change.t === 'upsert' || change.t === 'import') return index.applyUpsert(change.plan, log ?? noLog, slices) as Result | Promise<Result>;
  const apply = (): Result => {
    switch (change.t) {
      case 'metadata':
        return index.setMetadata(change.id, change.metadata) as Result;
      case 'delete':
        return index.delete(change.ids) as Result;
      case 'clear':
        return index.clear() as Result;
      default:
        return index.reset() as Result;
    }
  };
  const logged = log?.();
  return logged ? logged.then(apply) : apply();
}

const noLog = () => undefined;

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
    out[i - from] = {
      id: rows.ids[i],
      vector: rows.rows.subarray(i * dim, (i + 1) * dim),
      metadata: metadata ? parseMetadata(metadata) : undefined,
      // A text is stored as the JSON string literal the index keeps.
      ...(text ? { text: JSON.parse(fromUtf8.decode(text)) as string } : {}),
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

/** Apply one logged change to `session` through applyToIndex (a reopen's replay; an import's parts arrive here one at a time, once all are known to be whole). */
export async function applyChange(session: Session, change: Change, slices: Slices): Promise<void> {
  const { index } = session;
  switch (change.t) {
    case 'upsert':
    case 'import': {
      const { dimensions, metric, vectorType, analyzer } = change;
      const options = { dimensions, metric, vectorType, ...(analyzer ? { analyzer } : {}) };
      const step = rowsPerStep(dimensions);
      for (let i = 0; i < change.ids.length; i += step) {
        // Acknowledged rows are replayed even past a MAX_VECTORS_PER_SESSION lowered since.
        index.allowRows(index.size + newIds(index, change.ids, i, Math.min(change.ids.length, i + step)));
        // Wide metadata or long texts make even a step's rows long to write: they go in slices too.
        const plan = index.prepareUpsert(inputs(change, i, Math.min(change.ids.length, i + step)), options);
        await applyToIndex(index, { t: change.t, plan }, undefined, slices);
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
