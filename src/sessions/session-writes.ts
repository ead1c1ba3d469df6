// Every change to a session's index, in one place. Each write checks what it
// can without changing anything, grows the memory it needs, logs the change
// to the session's journal (DATA_DIR; a failed write refuses the change with
// 503), applies it to the index, and marks the session updated. Routes parse,
// call one and reply; each runs inside inTurn(), which orders it against the
// session's searches (session-gate.ts): no search reads the memory while a
// write changes it.
import { apiError } from '../errors.js';
import { prepareImport, type ParsedImport } from '../export/import-reader.js';
import type { Filter, Metadata, UpsertOptions, UpsertPlan, UpsertResult, VectorInput } from '../index/vector-index.js';
import type { EncodedChange, SessionJournal } from './persistence/session-journal.js';
import type { Session } from './session.js';

/**
 * What the writes use of the session store, and nothing more: the memory
 * budget's checks, the journal (DATA_DIR), the clock, and recounting a
 * session in the budget once it changed.
 */
export interface WriteHost {
  assertMemoryBudget(session: Session, bytesAfter: number, what?: 'change', heapBytes?: number, metadataBytes?: number): void;
  assertWasmMemoryFor(session: Session): void;
  /** A promise when the change is written in pieces (a large one): applied once it settles, refused if it rejects. */
  journal(session: Session, write: (log: SessionJournal, at: number) => Promise<void> | undefined | void): Promise<void> | undefined;
  readonly now: () => number;
  recount(session: Session): void;
}

/** What a delete did. */
type Deleted = { deleted: number; notFound: string[] };

/** 404 VECTOR_NOT_FOUND for `id`. */
export function vectorNotFound(id: string) {
  return apiError('VECTOR_NOT_FOUND', `no vector with id "${id}"`, { path: '/id', id });
}

/** A write outside its turn could change memory a pool thread is reading: a bug, caught here. */
function assertTurn(session: Session): void {
  if (!session.gate.writing) throw new Error('a session write ran outside SessionWrites.inTurn()');
}

export class SessionWrites {
  constructor(private readonly store: WriteHost) {}

  /**
   * Run `change` (check, log, apply) once no search holds the session; writes go before waiting searches.
   * It is synchronous but for a change logged in pieces (a large one): then the turn lasts until it settles.
   */
  inTurn<T>(session: Session, change: () => T | Promise<T>): Promise<T> {
    return session.gate.write(change);
  }

  /** Check a batch (shape, capacity, the memory budget) without changing anything; upsert() writes it. */
  prepareUpsert(session: Session, records: VectorInput[], options: UpsertOptions): UpsertPlan {
    assertTurn(session);
    const plan = session.index.prepareUpsert(records, options);
    this.store.assertMemoryBudget(session, session.index.memoryBytesAfter(plan), 'change', plan.heapBytesAdded, plan.metadataBytesAdded + plan.textBytesAdded);
    this.store.assertWasmMemoryFor(session);
    return plan;
  }

  /** Add or replace the vectors of a plan from prepareUpsert (no change to the session in between; `encoded` ahead: store.encodeUpsert). */
  upsert(session: Session, plan: UpsertPlan, encoded?: EncodedChange): UpsertResult | Promise<UpsertResult> {
    assertTurn(session);
    // The memory grows before the change is logged: a failed grow leaves nothing in the log to replay.
    return this.changedWhen(session, session.index.applyUpsert(plan, () => this.store.journal(session, (journal, at) => journal.upsert(session, plan, at, encoded))));
  }

  /** Replace the metadata of `id` (404 when there is no such vector). */
  setMetadata(session: Session, id: string, metadata: Metadata): void {
    assertTurn(session);
    if (!session.index.has(id)) throw vectorNotFound(id);
    this.store.assertMemoryBudget(session, 0, 'change', 0, session.index.metadataBytesUpper(metadata));
    this.store.journal(session, (journal, at) => journal.metadata(session, id, metadata, at));
    session.index.setMetadata(id, metadata);
    this.changed(session, undefined);
  }

  /** Empty the metadata of `id` (404 when there is no such vector). */
  deleteMetadata(session: Session, id: string): Metadata {
    const empty: Metadata = {};
    this.setMetadata(session, id, empty);
    return empty;
  }

  /** Delete the vectors of `ids` that exist; logged only when one does. */
  delete(session: Session, ids: string[]): Deleted | Promise<Deleted> {
    assertTurn(session);
    const logged = ids.some((id) => session.index.has(id)) ? this.store.journal(session, (journal, at) => journal.delete(session, ids, at)) : undefined;
    return this.changedWhen(session, logged ? logged.then(() => session.index.delete(ids)) : session.index.delete(ids));
  }

  /** Delete every vector `filter` matches, in one step (logged as a delete of their ids). */
  deleteMatching(session: Session, filter: Filter): Deleted | Promise<Deleted> {
    assertTurn(session);
    const ids = session.index.idsMatching(filter);
    const logged = ids.length > 0 ? this.store.journal(session, (journal, at) => journal.delete(session, ids, at)) : undefined;
    const apply = (): Deleted => ({ deleted: session.index.delete(ids).deleted, notFound: [] });
    return this.changedWhen(session, logged ? logged.then(apply) : apply());
  }

  /** Replace the metadata of `id` with what `patch` makes of it (404 when there is no such vector); the new metadata. */
  patchMetadata(session: Session, id: string, patch: (current: Metadata) => Metadata): Metadata {
    assertTurn(session);
    const current = session.index.getMetadata(id);
    if (current === undefined) throw vectorNotFound(id);
    const metadata = patch(current.value());
    this.setMetadata(session, id, metadata);
    return metadata;
  }

  /** Check a whole import like prepareUpsert (null when it holds no vector); importPlan() applies it. */
  prepareImport(session: Session, parsed: ParsedImport): UpsertPlan | null {
    assertTurn(session);
    const plan = prepareImport(session.index, parsed);
    if (plan) this.store.assertMemoryBudget(session, session.index.memoryBytesAfter(plan), 'change', plan.heapBytesAdded, plan.metadataBytesAdded + plan.textBytesAdded);
    if (plan) this.store.assertWasmMemoryFor(session);
    return plan;
  }

  /** Apply an import as one upsert, logged in parts that a restart replays all or nothing (`encoded` ahead: store.encodeImport). */
  importPlan(session: Session, plan: UpsertPlan, encoded?: EncodedChange): UpsertResult | Promise<UpsertResult> {
    assertTurn(session);
    return this.changedWhen(session, session.index.applyUpsert(plan, () => this.store.journal(session, (journal, at) => journal.import(session, plan, at, encoded))));
  }

  /** Delete every vector, keeping the index's configuration; the number deleted. */
  clear(session: Session): number {
    assertTurn(session);
    this.store.journal(session, (journal, at) => journal.clear(session, at));
    return this.changed(session, session.index.clear());
  }

  /** Delete every vector and the configuration, freeing the memory; the number deleted. */
  reset(session: Session): number {
    assertTurn(session);
    this.store.journal(session, (journal, at) => journal.reset(session, at));
    return this.changed(session, session.index.reset());
  }

  private changed<T>(session: Session, result: T): T {
    session.markUpdated(this.store.now());
    this.store.recount(session);
    return result;
  }

  /** changed(), once a change logged in pieces is applied (and not if it was refused). */
  private changedWhen<T>(session: Session, result: T | Promise<T>): T | Promise<T> {
    return result instanceof Promise ? result.then((applied) => this.changed(session, applied)) : this.changed(session, result);
  }
}
