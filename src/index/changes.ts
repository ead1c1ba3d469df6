// One definition of a change to an index, and of what a request makes of
// one (a merge patch, a delete by filter). SessionWrites (src/sessions/)
// logs each change and then applies it here; LocalIndex (src/sdk/) applies
// the same changes with no log; a reopen's replay
// (sessions/persistence/change.ts) turns each logged record into them. An
// import is the upsert of its checked plan (prepareImport,
// export/import-reader.ts).
import type { Filter, Metadata } from './filter.js';
import type { UpsertPlan, UpsertResult } from './types.js';
import type { VectorIndex } from './vector-index.js';

/** An add or an import, as its checked plan. */
export type UpsertChange = { t: 'upsert' | 'import'; plan: UpsertPlan };
type MetadataChange = { t: 'metadata'; id: string; metadata: Metadata };
type DeleteChange = { t: 'delete'; ids: string[] };
/** Records' expiries set anew (POST /vectors/touch): absolute, so a replay gives each the same. */
export type RenewChange = { t: 'renew'; ids: string[]; expiresAt: number[] };

/** A change as the index applies it: an add or import as its checked plan, metadata as an object. */
export type IndexChange = UpsertChange | MetadataChange | DeleteChange | RenewChange | { t: 'clear' | 'reset' };

/** What applying each kind of change gives. */
export interface ChangeResults {
  upsert: UpsertResult;
  import: UpsertResult;
  /** False when there is no such vector. */
  metadata: boolean;
  delete: { deleted: number; notFound: string[] };
  /** Records whose expiry was set anew. */
  renew: number;
  /** Vectors removed. */
  clear: number;
  reset: number;
}

/** The metadata change that `patched` makes of the current metadata of `id` (a merge patch); undefined when there is no such vector. */
export function patchChange(index: VectorIndex, id: string, patched: (current: Metadata) => Metadata): MetadataChange | undefined {
  const current = index.getMetadata(id);
  return current === undefined ? undefined : { t: 'metadata', id, metadata: patched(current.value()) };
}

/** The delete of every vector `filter` matches, their ids in row order (its rows read ahead, if at all, by index.prepareFilter). */
export function deleteMatchingChange(index: VectorIndex, filter: Filter): DeleteChange {
  return { t: 'delete', ids: index.idsMatching(filter) };
}

/** What a touch of `ids` at `now` makes: each live record with a ttl expires ttlMs from now (renew, null when none has one); the live ones found, and the ids not found (never stored, deleted or expired). */
export function touchChange(index: VectorIndex, ids: string[], now: number): { renew: RenewChange | null; touched: number; notFound: string[] } {
  const renew: RenewChange = { t: 'renew', ids: [], expiresAt: [] };
  const notFound: string[] = [];
  let touched = 0;
  for (const id of new Set(ids)) {
    const ttl = index.ttlOf(id);
    if (ttl === undefined) {
      notFound.push(id);
      continue;
    }
    touched++;
    if (ttl === null) continue; // a record without a ttl never expires: nothing to renew
    renew.ids.push(id);
    renew.expiresAt.push(now + ttl.ttlMs);
  }
  return { renew: renew.ids.length > 0 ? renew : null, touched, notFound };
}

/**
 * Apply `change` to `index` whole, in the caller's tick. A session's add or
 * import, logged first and written in slices, goes through
 * index.applyUpsertSliced instead, and its delete through index.deleteSteps
 * (session-writes.ts): the same work with pauses.
 */
export function applyToIndex<C extends IndexChange>(index: VectorIndex, change: C): ChangeResults[C['t']] {
  type Result = ChangeResults[C['t']];
  switch (change.t) {
    case 'upsert':
    case 'import':
      return index.applyUpsert(change.plan) as Result;
    case 'metadata':
      return index.setMetadata(change.id, change.metadata) as Result;
    case 'delete':
      return index.delete(change.ids) as Result;
    case 'renew':
      return index.renew(change.ids, change.expiresAt) as Result;
    case 'clear':
      return index.clear() as Result;
    default:
      return index.reset() as Result;
  }
}
