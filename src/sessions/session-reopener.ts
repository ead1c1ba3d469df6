// DATA_DIR only: a session on disk, rebuilt from its log on the first
// request with its token after a restart (the caller's dbOpenMs includes
// this). Every request with the token waits for the same reopen. What the
// journal's reopen came to (ReopenOutcome) is answered here: the session, or
// a refusal that leaves it on disk (503), or SESSION_EXPIRED for a log set aside.
import type { Config } from '../config.js';
import { apiError } from '../errors.js';
import { retryAfterSeconds, type BudgetLedger } from './budget-ledger.js';
import { diskError } from './durability.js';
import type { RestoreReport, SessionJournal } from './persistence/session-journal.js';
import type { Session } from './session.js';
import type { SessionRegistry } from './session-registry.js';

/** What a reopen uses of the store. */
export interface ReopenHost {
  readonly registry: SessionRegistry;
  readonly ledger: BudgetLedger;
  readonly now: () => number;
  /** A session of `hash` as its log's open record names it, last accessed `now`. */
  make(hash: string, now: number, restored: { id: string; createdAt: number }): Session;
  /** The reopened session joins the live ones. */
  admit(session: Session): void;
}

export class SessionReopener {
  /** Sessions being rebuilt from their logs (token hash -> the reopen every request with the token waits for). */
  private readonly pending = new Map<string, Promise<Session | undefined>>();

  constructor(
    private readonly config: Config,
    private readonly log: SessionJournal,
    private readonly host: ReopenHost,
  ) {}

  /** Sessions being reopened now. */
  get count(): number {
    return this.pending.size;
  }

  /** Whether `hash` names a session on disk, or one being reopened. */
  knows(hash: string): boolean {
    return this.pending.has(hash) || this.host.registry.lastAccessOnDisk(hash) !== undefined;
  }

  /** The session of `hash`, reopened (the one reopen under way, if any); undefined when there is none to reopen. */
  reopen(hash: string): Promise<Session | undefined> {
    let pending = this.pending.get(hash);
    if (!pending) {
      pending = this.reopenNow(hash).finally(() => this.pending.delete(hash));
      this.pending.set(hash, pending);
    }
    return pending;
  }

  private async reopenNow(hash: string): Promise<Session | undefined> {
    const { registry, ledger } = this.host;
    const lastWrite = registry.lastAccessOnDisk(hash);
    const now = this.host.now();
    if (lastWrite === undefined) return undefined;
    if (now >= lastWrite + this.config.sessionTtlMs) {
      registry.forget(hash, now);
      return undefined;
    }
    try {
      ledger.assertWasmMemoryLeft('the session is kept on disk and reopens once one is free, try again later');
    } catch (err) {
      // This request counts as an access: the session does not expire while its caller is refused.
      registry.keepOnDisk(hash, now);
      this.log.files.stampAccess(hash, now);
      throw err;
    }
    registry.takeFromDisk(hash);
    const outcome = await this.log.reopen(hash, (id, createdAt) => this.host.make(hash, now, { id, createdAt }));
    const shortHash = `${hash.slice(0, 12)}...`;
    switch (outcome.t) {
      case 'reopened': {
        const { session, report } = outcome;
        // Its last access on record: the log's, or a later request that was refused (the file's time).
        session.touch(Math.max(session.lastAccessedAt, lastWrite));
        if (report.tornTail) warnCut(session, report);
        this.host.admit(session);
        return session;
      }
      case 'empty':
        registry.addresses.remove(hash);
        return undefined; // its creation failed: it was never acknowledged
      case 'no-memory':
        registry.keepOnDisk(hash, now);
        console.error(`tempvec: no memory to reopen a session (token hash ${shortHash}); it stays on disk: ${outcome.error.message}`);
        throw apiError('SERVER_AT_CAPACITY', 'the server could not reserve memory to reopen this session; it is kept on disk, try again later', undefined, {
          'Retry-After': String(retryAfterSeconds(this.config)),
        });
      case 'unreadable':
        // Unreadable for now (I/O error, no file handles): it stays on disk for a later try.
        registry.keepOnDisk(hash, lastWrite);
        console.error(`tempvec: cannot read the log of a session (token hash ${shortHash}): ${outcome.error.message}`);
        throw diskError("the session's stored data could not be read; nothing was changed, try again later");
      case 'set-aside':
        registry.addresses.remove(hash);
        if (outcome.why === 'other-format') {
          console.error(
            `tempvec: the log of a session (token hash ${shortHash}) is not a tempvec log of the version this server reads, and was set aside as .other-format: ${outcome.error.message}`,
          );
          throw apiError('SESSION_EXPIRED', "the session's stored data is in a format this server does not read; request a new token with POST /token");
        }
        console.error(`tempvec: the log of a session (token hash ${shortHash}) is damaged and was set aside: ${outcome.error.message}`);
        throw apiError('SESSION_EXPIRED', "the session's stored data was damaged and could not be restored; request a new token with POST /token");
    }
  }
}

/** Tell the operator what a reopen cut off a log. */
function warnCut(session: Session, report: RestoreReport): void {
  const lost =
    report.cutRecords > 0
      ? `${report.cutRecords} whole records after the damage were cut too (changes not yet on stable storage when the power failed; FSYNC=always acknowledges none of them)`
      : 'no whole record after it';
  console.warn(`tempvec: session ${session.id}: cut the log at its first torn or damaged record (${report.tornTail}); ${lost}`);
}
