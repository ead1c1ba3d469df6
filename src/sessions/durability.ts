// The journal side of a write (DATA_DIR only; without it the store has no
// Durability and writes log nothing): a change is logged before it is
// applied, and a failed write refuses it (503, or 507 past a disk quota)
// leaving nothing of it on disk; FSYNC=always's answers wait until the
// change is on stable storage.
import { ApiError, apiError } from '../errors.js';
import type { UpsertOptions, UpsertPlan, VectorInput } from '../index/types.js';
import type { IndexChange } from '../index/changes.js';
import { SyncNotTriedError } from './persistence/log-file.js';
import type { EncodedChange, SessionJournal } from './persistence/session-journal.js';
import type { Session } from './session.js';

/** What a write asks of the journal (session-writes.ts, and the routes' encoding ahead of a write turn). */
export interface Durability {
  /**
   * Log `change` before it is applied. Truly sync or async: a promise when the
   * change is written in pieces (a large one, off the event loop), applied once
   * it settles and refused if it rejects; undefined when it is on the log already.
   */
  record(session: Session, change: IndexChange, encoded?: EncodedChange): Promise<void> | undefined;
  /** FSYNC=always: settles once the session's logged changes are on stable storage; undefined when there is nothing to wait for. */
  durable(session: Session): Promise<void> | undefined;
  /** A large add-many's log record, encoded in slices ahead of its write turn; undefined for a small one, or one the turn will refuse. */
  encodeUpsert(session: Session, records: VectorInput[], options: UpsertOptions): Promise<EncodedChange | undefined>;
  /** An import's log records, encoded in slices ahead of the step that applies it. */
  encodeImport(plan: UpsertPlan): Promise<EncodedChange>;
}

/** 503 for a change the disk did not take (or could not confirm). */
export function diskError(message = 'the change could not be saved to disk; nothing was changed, try again later') {
  return apiError('SERVER_AT_CAPACITY', message, undefined, { 'Retry-After': '60' });
}

export class JournalDurability implements Durability {
  constructor(
    private readonly log: SessionJournal,
    private readonly now: () => number,
  ) {}

  record(session: Session, change: IndexChange, encoded?: EncodedChange): Promise<void> | undefined {
    return this.journal(session, (log, at) => log.record(session, change, at, encoded));
  }

  /**
   * Run `write` on the journal, a failed one refused with 503 (507 past a quota,
   * before anything was written): nothing is acknowledged that is not on disk.
   */
  journal(session: Session, write: (log: SessionJournal, at: number) => Promise<void> | undefined | void): Promise<void> | undefined {
    const failed = (err: unknown): never => {
      // Past DATA_DIR_MAX_BYTES or MAX_SESSION_LOG_BYTES: refused (507) before anything was written.
      if (err instanceof ApiError) throw err;
      console.error(`tempvec: cannot write the log of session ${session.id}:`, (err as Error).message ?? err);
      throw diskError();
    };
    try {
      // A change written in pieces (a large one) is on the log once this settles.
      return write(this.log, this.now())?.catch(failed);
    } catch (err) {
      return failed(err);
    }
  }

  /**
   * After a failed fdatasync that is once the log has been rewritten from
   * memory and fsynced; if that fails too, the caller hears 503 (the change
   * stays in memory and is written by the next rewrite, which the next change tries).
   */
  durable(session: Session): Promise<void> | undefined {
    const synced = this.log.durable(session);
    return synced?.catch((err) => {
      if (err instanceof SyncNotTriedError) {
        console.error(`tempvec: the log of session ${session.id} could not be fsynced now: ${err.message}`);
        throw diskError('the server has no file handle free to confirm the change on disk; it was not confirmed, read the session back before retrying');
      }
      console.error(`tempvec: the log of session ${session.id} could not be confirmed on disk:`, (err as Error).message ?? err);
      throw diskError('the change could not be confirmed on disk; read the session back before retrying');
    });
  }

  async encodeUpsert(session: Session, records: VectorInput[], options: UpsertOptions): Promise<EncodedChange | undefined> {
    let plan: UpsertPlan;
    try {
      plan = session.index.prepareUpsert(records, options);
    } catch {
      return undefined;
    }
    return this.log.encodeUpsert(plan, this.now());
  }

  encodeImport(plan: UpsertPlan): Promise<EncodedChange> {
    return this.log.encodeImport(plan, this.now());
  }
}
