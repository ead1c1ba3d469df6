// Every change to a session's index, in one place. Each write checks what it
// can without changing anything, then goes through write(): grows the memory
// it needs, logs the change to the session's journal (DATA_DIR; a failed
// write refuses the change with 503), applies it to the index through
// applyToIndex (persistence/change.ts, which a reopen's replay runs too), and
// marks the session updated; a large add or import is applied in slices
// that give the event loop back, the turn held until the last (reads outside
// the gate wait for it: Session.settled). Routes parse,
// call one and reply; each runs inside inTurn(), which orders it against the
// session's searches (session-gate.ts): no search reads the memory while a
// write changes it.
import { apiError } from '../errors.js';
import { prepareImport, type ParsedImport } from '../export/import-reader.js';
import { LoopTurns } from '../limits/loop-turns.js';
import type { Filter, Metadata } from '../index/filter.js';
import type { UpsertOptions, UpsertPlan, UpsertResult, VectorInput } from '../index/types.js';
import { applyToIndex, type ChangeResults, type IndexChange } from './persistence/change.js';
import type { Durability } from './durability.js';
import type { EncodedChange } from './persistence/session-journal.js';
import type { Session } from './session.js';
import { Slices } from '../limits/slices.js';

/**
 * What the writes use of the session store, and nothing more: the memory
 * budget's checks, the clock, and recounting a session in the budget once
 * it changed. The journal comes apart, as the Durability (DATA_DIR only).
 */
export interface WriteHost {
  assertMemoryBudget(session: Session, bytesAfter: number, what?: 'change', heapBytes?: number, metadataBytes?: number): void;
  assertWasmMemoryFor(session: Session): void;
  readonly now: () => number;
  recount(session: Session): void;
}

/** What a delete did. */
type Deleted = ChangeResults['delete'];

/** `fn` of `value`, or of what it settles to (a change logged in pieces). */
function then<T, U>(value: T | Promise<T>, fn: (settled: T) => U): U | Promise<U> {
  return value instanceof Promise ? value.then(fn) : fn(value);
}

/** 404 VECTOR_NOT_FOUND for `id`. */
export function vectorNotFound(id: string) {
  return apiError('VECTOR_NOT_FOUND', `no vector with id "${id}"`, { path: '/id', id });
}

/** A write outside its turn could change memory a pool thread is reading: a bug, caught here. */
function assertTurn(session: Session): void {
  if (!session.gate.writing) throw new Error('a session write ran outside SessionWrites.inTurn()');
}

export class SessionWrites {
  /** One write's step per turn of the event loop, whatever its session (loop-turns.ts). */
  private readonly turns = new LoopTurns();

  constructor(
    private readonly store: WriteHost,
    /** DATA_DIR only: each change is logged before it is applied (durability.ts). */
    private readonly durability?: Durability,
  ) {}

  /**
   * Run `change` (check, log, apply) once no search holds the session; writes go before waiting searches.
   * It is synchronous but for a change logged in pieces (a large one): then the turn lasts until it settles.
   */
  inTurn<T>(session: Session, change: () => T | Promise<T>): Promise<T> {
    return session.gate.write(change);
  }

  /**
   * inTurn(), the change run on a later turn of the event loop, one write of
   * any session a turn (loop-turns.ts): the routes' writes, so other sessions'
   * reads are answered between them. The session's order is kept (its turn is taken first).
   */
  inLoopTurn<T>(session: Session, change: () => T | Promise<T>): Promise<T> {
    return session.gate.write(() => this.turns.next().then(change));
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
    return this.write(session, { t: 'upsert', plan }, encoded);
  }

  /** Replace the metadata of `id` (404 when there is no such vector). */
  setMetadata(session: Session, id: string, metadata: Metadata): void | Promise<void> {
    assertTurn(session);
    if (!session.index.has(id)) throw vectorNotFound(id);
    this.store.assertMemoryBudget(session, 0, 'change', 0, session.index.metadataBytesUpper(metadata));
    return then(this.write(session, { t: 'metadata', id, metadata }), () => undefined);
  }

  /** Empty the metadata of `id` (404 when there is no such vector). */
  deleteMetadata(session: Session, id: string): Metadata | Promise<Metadata> {
    const empty: Metadata = {};
    return then(this.setMetadata(session, id, empty), () => empty);
  }

  /** Delete the vectors of `ids` that exist; logged only when one does. */
  delete(session: Session, ids: string[]): Deleted | Promise<Deleted> {
    assertTurn(session);
    if (ids.some((id) => session.index.has(id))) return this.write(session, { t: 'delete', ids });
    return this.changed(session, applyToIndex(session.index, { t: 'delete', ids }));
  }

  /** Delete every vector `filter` matches, in one step (logged as a delete of their ids). */
  deleteMatching(session: Session, filter: Filter): Deleted | Promise<Deleted> {
    assertTurn(session);
    // Rows the filter must read are read in slices first; the turn holds writes away meanwhile.
    const reading = session.index.prepareFilter(filter);
    if (reading) return reading.then(() => this.deleteMatchingNow(session, filter));
    return this.deleteMatchingNow(session, filter);
  }

  private deleteMatchingNow(session: Session, filter: Filter): Deleted | Promise<Deleted> {
    const ids = session.index.idsMatching(filter);
    const deleted = ids.length > 0 ? this.write(session, { t: 'delete', ids }) : this.changed(session, { deleted: 0, notFound: [] });
    return then(deleted, ({ deleted }) => ({ deleted, notFound: [] }));
  }

  /** Replace the metadata of `id` with what `patch` makes of it (404 when there is no such vector); the new metadata. */
  patchMetadata(session: Session, id: string, patch: (current: Metadata) => Metadata): Metadata | Promise<Metadata> {
    assertTurn(session);
    const current = session.index.getMetadata(id);
    if (current === undefined) throw vectorNotFound(id);
    const metadata = patch(current.value());
    return then(this.setMetadata(session, id, metadata), () => metadata);
  }

  /** Check a whole import like prepareUpsert (null when it holds no vector); importPlan() applies it. */
  prepareImport(session: Session, parsed: ParsedImport): UpsertPlan | null {
    assertTurn(session);
    const plan = prepareImport(session.index, parsed);
    if (plan)
      this.store.assertMemoryBudget(
        session,
        session.index.memoryBytesAfter(plan),
        'change',
        plan.heapBytesAdded,
        plan.metadataBytesAdded + plan.textBytesAdded,
      );
    if (plan) this.store.assertWasmMemoryFor(session);
    return plan;
  }

  /** Apply an import as one upsert, logged in parts that a restart replays all or nothing (`encoded` ahead: store.encodeImport). */
  importPlan(session: Session, plan: UpsertPlan, encoded?: EncodedChange): UpsertResult | Promise<UpsertResult> {
    assertTurn(session);
    return this.write(session, { t: 'import', plan }, encoded);
  }

  /** Delete every vector, keeping the index's configuration; the number deleted. */
  clear(session: Session): number | Promise<number> {
    assertTurn(session);
    return this.write(session, { t: 'clear' });
  }

  /** Delete every vector and the configuration, freeing the memory; the number deleted. */
  reset(session: Session): number | Promise<number> {
    assertTurn(session);
    return this.write(session, { t: 'reset' });
  }

  private changed<T>(session: Session, result: T): T {
    session.markUpdated(this.store.now());
    this.store.recount(session);
    return result;
  }

  /**
   * The one path of every change: grow (an add's memory, before anything is logged, so a failed
   * grow leaves nothing in the log to replay), log (DATA_DIR), apply (applyToIndex), mark the
   * session updated. A promise when the change is logged in pieces (a large one).
   */
  private write<C extends IndexChange>(session: Session, change: C, encoded?: EncodedChange): ChangeResults[C['t']] | Promise<ChangeResults[C['t']]> {
    // A large add or import is written in slices; the turn (the gate) is held until its last one.
    const log = () => this.durability?.record(session, change, encoded);
    const applied = applyToIndex(session.index, change, log, new Slices());
    return then(applied, (result) => this.changed(session, result));
  }
}
