// Every change to a session's index, in one place. Each write checks what it
// can without changing anything, then goes through write() or writeUpsert():
// grows the memory an add needs, logs the change to the session's journal
// (DATA_DIR; a failed write refuses the change with 503), applies it to the
// index (index/changes.ts, which LocalIndex and a reopen's replay apply
// too), and marks the session updated; an add or import is applied in
// slices that give the event loop back, the turn held until the last (reads
// outside the gate wait for it: Session.settled). Every write answers with a
// promise, decided here once; one logged at once and applied in one slice
// still changes the index in the caller's tick. Routes parse, call one and
// reply; each runs inside inTurn(), which orders it against the session's
// searches (session-gate.ts): no search reads the memory while a write
// changes it.
import { apiError } from '../errors.js';
import { prepareImportSteps, type ParsedImport } from '../export/import-reader.js';
import { LOOP_TURNS } from '../limits/loop-turns.js';
import type { Filter, Metadata } from '../index/filter.js';
import type { UpsertOptions, UpsertPlan, UpsertResult, VectorInput } from '../index/types.js';
import { applyToIndex, deleteMatchingChange, patchChange, touchChange, type ChangeResults, type IndexChange, type UpsertChange } from '../index/changes.js';
import type { Durability } from './durability.js';
import type { EncodedChange } from './persistence/session-journal.js';
import type { Session } from './session.js';
import { REQUEST_SLICE_MS, SLICE_MS, Slices } from '../limits/slices.js';

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

/** Expired rows a sweep's turn looks for at most (it removes fewer when its slice runs out). */
const EXPIRED_ROWS_PER_TURN = 4096;

/** What a delete did. */
type Deleted = ChangeResults['delete'];

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
  private readonly turns = LOOP_TURNS;

  constructor(
    private readonly store: WriteHost,
    /** DATA_DIR only: each change is logged before it is applied (durability.ts). */
    private readonly durability?: Durability,
  ) {}

  /**
   * Run `change` (check, log, apply) once no search holds the session; writes go before waiting searches.
   * The turn lasts until what it returns settles.
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
    return session.gate.write(() => this.turns.next(session.tokenHash).then(change));
  }

  /** Check a batch (shape, capacity, the memory budget) without changing anything; upsert() writes it. */
  prepareUpsert(session: Session, records: VectorInput[], options: UpsertOptions): UpsertPlan {
    assertTurn(session);
    session.index.makeRoomFor(records.length);
    const plan = session.index.prepareUpsert(records, options);
    this.store.assertMemoryBudget(session, session.index.memoryBytesAfter(plan), 'change', plan.heapBytesAdded, plan.metadataBytesAdded + plan.textBytesAdded);
    this.store.assertWasmMemoryFor(session);
    return plan;
  }

  /** Add or replace the vectors of a plan from prepareUpsert (no change to the session in between; `encoded` ahead: store.encodeUpsert). */
  async upsert(session: Session, plan: UpsertPlan, encoded?: EncodedChange): Promise<UpsertResult> {
    assertTurn(session);
    return this.writeUpsert(session, { t: 'upsert', plan }, encoded);
  }

  /** Replace the metadata of `id` (404 when there is no such vector). */
  async setMetadata(session: Session, id: string, metadata: Metadata): Promise<void> {
    assertTurn(session);
    if (!session.index.has(id)) throw vectorNotFound(id);
    this.store.assertMemoryBudget(session, 0, 'change', 0, session.index.metadataBytesUpper(metadata));
    await this.write(session, { t: 'metadata', id, metadata });
  }

  /** Empty the metadata of `id` (404 when there is no such vector). */
  async deleteMetadata(session: Session, id: string): Promise<Metadata> {
    const empty: Metadata = {};
    await this.setMetadata(session, id, empty);
    return empty;
  }

  /** Delete the vectors of `ids` that exist; logged only when one does. */
  async delete(session: Session, ids: string[]): Promise<Deleted> {
    assertTurn(session);
    if (ids.some((id) => session.index.has(id))) return this.write(session, { t: 'delete', ids });
    return this.changed(session, applyToIndex(session.index, { t: 'delete', ids }));
  }

  /** Renew the live records of `ids`: each with a ttl expires ttlMs from now (logged as their absolute expiries); the ids not found. */
  async touch(session: Session, ids: string[]): Promise<{ touched: number; notFound: string[] }> {
    assertTurn(session);
    const { renew, touched, notFound } = touchChange(session.index, ids, this.store.now());
    if (renew) await this.write(session, renew);
    return { touched, notFound };
  }

  /**
   * The sweep (expiry-sweep.ts): free the memory of rows expired now, a slice's worth (reads left them out
   * already); how many. Not logged: a replay expires them again from their logged expiries.
   */
  async removeExpired(session: Session, slices: Slices): Promise<number> {
    assertTurn(session);
    const removed = session.index.removeExpired(() => slices.due(), EXPIRED_ROWS_PER_TURN);
    await slices.run(session.index.settleSteps());
    this.store.recount(session);
    return removed;
  }

  /** Delete every vector `filter` matches, in one step (logged as a delete of their ids). */
  async deleteMatching(session: Session, filter: Filter): Promise<Deleted> {
    assertTurn(session);
    // Rows the filter must read are read in slices first; the turn holds writes away meanwhile.
    const reading = session.index.prepareFilter(filter);
    if (reading) await reading;
    const change = deleteMatchingChange(session.index, filter);
    if (change.ids.length === 0) return this.changed(session, { deleted: 0, notFound: [] });
    const { deleted } = await this.write(session, change);
    return { deleted, notFound: [] };
  }

  /** Replace the metadata of `id` with what `patch` makes of it (404 when there is no such vector); the new metadata. */
  async patchMetadata(session: Session, id: string, patch: (current: Metadata) => Metadata): Promise<Metadata> {
    assertTurn(session);
    const change = patchChange(session.index, id, patch);
    if (!change) throw vectorNotFound(id);
    await this.setMetadata(session, id, change.metadata);
    return change.metadata;
  }

  /**
   * Check a whole import like prepareUpsert (null when it holds no vector); importPlan() applies it. Its plan
   * (up to MAX_VECTORS_PER_SESSION records) is made in slices, the turn held until it is done.
   */
  async prepareImport(session: Session, parsed: ParsedImport): Promise<UpsertPlan | null> {
    assertTurn(session);
    session.index.makeRoomFor(parsed.records.length);
    const plan = await new Slices(REQUEST_SLICE_MS, { owner: session.tokenHash }).run(prepareImportSteps(session.index, parsed));
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
  async importPlan(session: Session, plan: UpsertPlan, encoded?: EncodedChange): Promise<UpsertResult> {
    assertTurn(session);
    return this.writeUpsert(session, { t: 'import', plan }, encoded);
  }

  /** Delete every vector, keeping the index's configuration; the number deleted. */
  async clear(session: Session): Promise<number> {
    assertTurn(session);
    return this.write(session, { t: 'clear' });
  }

  /** Delete every vector and the configuration, freeing the memory; the number deleted. */
  async reset(session: Session): Promise<number> {
    assertTurn(session);
    return this.write(session, { t: 'reset' });
  }

  private changed<T>(session: Session, result: T): T {
    session.markUpdated(this.store.now());
    this.store.recount(session);
    return result;
  }

  /**
   * Log `change` (DATA_DIR; a large one in pieces, awaited) then apply it and mark the session updated:
   * a delete in slices (its rows, then the keyword index's compaction), anything else in one step (applyToIndex).
   */
  private async write<C extends Exclude<IndexChange, UpsertChange>>(session: Session, change: C): Promise<ChangeResults[C['t']]> {
    const logged = this.log(session, change);
    if (logged) await logged;
    if (change.t !== 'delete') return this.changed(session, applyToIndex(session.index, change));
    const slices = new Slices(SLICE_MS, { owner: session.tokenHash });
    return this.changed(session, (await slices.run(session.index.deleteSteps(change.ids))) as ChangeResults[C['t']]);
  }

  /**
   * An add or import: its memory grown before anything is logged (a failed grow leaves nothing in the log
   * to replay), logged, then written in slices; the turn (the gate) is held until the last one.
   */
  private async writeUpsert(session: Session, change: UpsertChange, encoded?: EncodedChange): Promise<UpsertResult> {
    const applied = session.index.applyUpsertSliced(change.plan, new Slices(SLICE_MS, { owner: session.tokenHash }), () => this.log(session, change, encoded));
    // Done in this tick (logged at once, one slice): recounted in it too, not a microtask later.
    return this.changed(session, applied instanceof Promise ? await applied : applied);
  }

  /** The change on the session's journal: a promise when it is written in pieces (undefined without DATA_DIR). */
  private log(session: Session, change: IndexChange, encoded?: EncodedChange): Promise<void> | undefined {
    return this.durability?.record(session, change, encoded);
  }
}
