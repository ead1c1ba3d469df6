// SessionStore: issues tokens, finds a session by its token and frees the
// memory of idle ones. It ties together the parts, each in its file: the
// registry (session-registry.ts: the sessions in memory, on disk and lately
// expired), the budget ledger (budget-ledger.ts: what they cost against the
// memory budget), and with DATA_DIR the journal (persistence/), the journal
// side of writes (durability.ts) and the reopener (session-reopener.ts: a
// session on disk rebuilt on its first request after a restart).
import { SPEC_LIMITS, type Config } from '../config.js';
import { apiError } from '../errors.js';
import type { UpsertOptions, UpsertPlan, VectorInput } from '../index/types.js';
import { JobSlots } from '../limits/job-slots.js';
import type { KernelPool } from '../kernel/kernel-pool.js';
import { BudgetLedger, retryAfterSeconds } from './budget-ledger.js';
import { ExpirySweep } from './expiry-sweep.js';
import { JournalDurability } from './durability.js';
import type { JournalFs } from './persistence/journal-fs.js';
import { SessionJournal, type EncodedChange, type JournalCounts } from './persistence/session-journal.js';
import { Session } from './session.js';
import { SessionRegistry } from './session-registry.js';
import { SessionReopener } from './session-reopener.js';
import { SessionSearches } from './session-searches.js';
import { SessionWrites } from './session-writes.js';
import { hashToken, isTokenOf, newToken } from './token.js';

export type Clock = () => number;

export interface StoreOptions {
  /** The journal's file operations (tests inject disk faults). */
  journalFs?: JournalFs;
  /** Longest step of a log's compaction or reopen before the event loop gets a turn (bench:persistence). */
  journalSliceMs?: number;
  /** A change larger than this is logged in pieces of this size (WRITE_PIECE_BYTES; the power-loss harness lowers it). */
  journalWritePieceBytes?: number;
  /** KERNEL_THREADS > 1: the threads that run large searches (the kernel module is then the shared build). */
  pool?: KernelPool | null;
}

export class SessionStore {
  // Constant after construction: the parts.
  readonly registry: SessionRegistry;
  readonly ledger: BudgetLedger;
  /** DATA_DIR only: the session logs, the journal side of writes, and reopens after a restart. */
  private readonly log: SessionJournal | undefined;
  readonly durability: JournalDurability | undefined;
  private readonly reopener: SessionReopener | undefined;
  /** Every change to a session's index goes through these (session-writes.ts). */
  readonly writes: SessionWrites;
  /** Every search of a session's index goes through these (session-searches.ts). */
  readonly searches: SessionSearches;
  /** Frees the memory of expired records (per-record TTL; expiry-sweep.ts). */
  readonly expirySweep: ExpirySweep;

  // Changed by restore() and the sweeper.
  /** True until restore() has listed the sessions on disk: tokens and new sessions are refused with 503 meanwhile. */
  restoring = false;
  private sweeper: NodeJS.Timeout | undefined;

  /** `restoreNow` false: the sessions on disk are listed later, by restore() (the server listens first, so /readyz can answer). */
  constructor(
    private readonly config: Config,
    private readonly kernelModule: WebAssembly.Module,
    readonly now: Clock = Date.now,
    restoreNow = true,
    options: StoreOptions = {},
  ) {
    this.searches = new SessionSearches(options.pool ?? null, (session) => this.recount(session));
    if (config.dataDir !== '') {
      this.log = new SessionJournal(config.dataDir, Math.min(60_000, Math.ceil(config.sessionTtlMs / 20)), {
        fsync: config.fsync,
        fs: options.journalFs,
        sliceMs: options.journalSliceMs,
        writePieceBytes: options.journalWritePieceBytes,
        slots: new JobSlots(config.persistenceJobs),
        lockStaleMs: config.lockStaleMs,
        hold: (bytes) => this.budget.hold('persistence', bytes),
        maxBytes: config.dataDirMaxBytes,
        maxLogBytes: config.maxSessionLogBytes,
        now,
      });
      this.durability = new JournalDurability(this.log, now);
    }
    this.registry = new SessionRegistry(config, this.log, (session) => this.dropMemory(session));
    this.ledger = new BudgetLedger(config, {
      isLive: (session) => this.registry.isLive(session),
      remembered: () => this.registry.remembered,
      reopening: () => this.reopener?.count ?? 0,
    });
    if (this.log) this.reopener = new SessionReopener(config, this.log, this);
    this.writes = new SessionWrites(this, this.durability);
    this.expirySweep = new ExpirySweep(() => this.registry.liveSessions(), this.writes, SPEC_LIMITS.recordSweepIntervalMs);
    this.searches.sweepFirst = (session) => this.expirySweep.sweepSession(session);
    if (this.log && restoreNow) this.registry.loadNow(this.log.files.scan());
    else if (this.log) this.restoring = true;
  }

  /** MEMORY_BUDGET_BYTES over what sessions store and what requests hold in flight. */
  get budget() {
    return this.ledger.budget;
  }

  /** List the sessions on disk without blocking the event loop (they are reopened on their first request). */
  async restore(): Promise<void> {
    if (!this.restoring || !this.log) return;
    await this.registry.load(await this.log.files.scanAsync());
    this.restoring = false;
  }

  private assertRestored(): void {
    if (this.restoring) {
      throw apiError('INSTANCE_UNAVAILABLE', 'this instance is still restoring its sessions from disk; try again in a moment', undefined, {
        'Retry-After': '1',
      });
    }
  }

  /** Vectors stored in the sessions in memory (those on disk waiting to be reopened are not counted). */
  vectorCount(): number {
    let total = 0;
    for (const session of this.registry.liveSessions()) total += session.index.size;
    return total;
  }

  /** Live sessions, those on disk waiting to be reopened included. */
  get size(): number {
    return this.registry.size + (this.reopener?.count ?? 0);
  }

  /** A session of `hash` (a new one, or `restored` from its log), last accessed `now`. */
  make(hash: string, now: number, restored?: { id: string; createdAt: number }): Session {
    const session = new Session(hash, this.kernelModule, this.config.maxVectorsPerSession, this.config.sessionTtlMs, now, restored);
    session.index.maxTextBytes = this.config.maxTextBytes;
    session.index.clock = this.now;
    return session;
  }

  /** A new session and the only copy of its token; `address`: the hash of the caller's address (session-addresses.ts), if counted. */
  create(address?: string): { token: string; session: Session } {
    this.assertRestored();
    if (address !== undefined) this.assertAddressRoom(address);
    // Expired sessions make room first (the sweeper's timer may not have run yet).
    if (this.size >= this.config.maxSessions) this.sweep();
    if (this.size >= this.config.maxSessions) {
      throw apiError('SERVER_AT_CAPACITY', `the server holds its maximum of ${this.config.maxSessions} sessions; try again later`, undefined, {
        'Retry-After': String(this.retryAfterSeconds()),
      });
    }
    this.ledger.assertSessionRoom();
    const token = newToken(this.config.instanceId);
    const session = this.make(hashToken(token), this.now());
    this.journal(session, (log) => log.create(session));
    this.admit(session);
    if (address !== undefined) this.registry.addresses.add(session.tokenHash, address);
    return { token, session };
  }

  /** 429 TOO_MANY_SESSIONS when `address` holds MAX_SESSIONS_PER_ADDRESS live sessions (its expired ones go first). */
  private assertAddressRoom(address: string): void {
    const max = this.config.maxSessionsPerAddress;
    const { addresses } = this.registry;
    if (max === 0 || addresses.count(address) < max) return;
    this.registry.sweepAddress(address, this.now());
    if (addresses.count(address) < max) return;
    throw apiError(
      'TOO_MANY_SESSIONS',
      `this address already holds ${max} live sessions, the most one address may; use one of them, or wait until one expires`,
      { maxSessionsPerAddress: max },
      { 'Retry-After': String(this.retryAfterSeconds()) },
    );
  }

  /** Live sessions created from `address` (those on disk included). */
  sessionsOfAddress(address: string): number {
    return this.registry.addresses.count(address);
  }

  /**
   * The live session of `token`, its expiry slid forward; throws 401
   * otherwise. Truly either: a session in memory is answered in the same
   * tick (every request), one still on disk after a restart is reopened
   * first, in slices (a promise then); the middleware awaits only that.
   */
  authenticate(token: string): Session | Promise<Session> {
    // A token of another instance is answered like any token this one did not issue.
    if (!isTokenOf(token, this.config.instanceId)) throw apiError('INVALID_TOKEN', 'the token is not valid; request a new one with POST /token');
    this.assertRestored();
    const hash = hashToken(token);
    const session = this.registry.live(hash);
    if (session) return this.use(session);
    if (this.reopener?.knows(hash)) return this.authenticateReopened(this.reopener, hash);
    throw this.registry.unknown(hash);
  }

  private async authenticateReopened(reopener: SessionReopener, hash: string): Promise<Session> {
    const session = await reopener.reopen(hash);
    if (!session) throw this.registry.unknown(hash);
    return this.use(session);
  }

  /** A request uses a live session: expired, or touched (a read is logged now and then). */
  private use(session: Session): Session {
    const now = this.now();
    if (session.isExpired(now)) {
      this.registry.expire(session, now);
      throw this.registry.unknown(session.tokenHash);
    }
    session.touch(now);
    this.log?.touched(session);
    return session;
  }

  /** A session joins the live ones; its searches ask the memory budget before they grow its memory. */
  admit(session: Session): void {
    session.index.memoryGuard = (bytesAfter) => this.assertMemoryBudget(session, bytesAfter, 'search');
    const pool = this.searches.pool;
    if (pool) session.index.kernelDropped = (kernelId) => pool.release(kernelId);
    this.registry.add(session);
    this.recount(session);
  }

  /** Free a dropped session's memory now, not when the GC finds it; after a search still running on it. */
  private dropMemory(session: Session): void {
    void session.gate.write(() => {
      session.index.reset();
      this.recount(session);
    });
  }

  /** Expire every idle session and forget old expired tokens. */
  sweep(): void {
    this.registry.sweep(this.now());
  }

  startSweeper(): void {
    this.stopSweeper();
    this.sweeper = setInterval(() => this.sweep(), this.config.sweepIntervalMs);
    this.sweeper.unref();
    this.expirySweep.start();
  }

  stopSweeper(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
    this.expirySweep.stop();
  }

  // The budget ledger's checks and counts (budget-ledger.ts), for the writes, searches and routes.

  assertMemoryBudget(session: Session, bytesAfter: number, what: 'change' | 'search' = 'change', heapBytes = 0, metadataBytes = 0): void {
    this.ledger.assertMemoryBudget(session, bytesAfter, what, heapBytes, metadataBytes);
  }

  assertWasmMemoryFor(session: Session): void {
    this.ledger.assertWasmMemoryFor(session);
  }

  recount(session: Session): void {
    this.ledger.recount(session);
  }

  wasmMemories(): number {
    return this.ledger.wasmMemories();
  }

  /** Total linear memory of all sessions, in bytes. */
  memoryBytes(): number {
    this.recountAll();
    return this.budget.linearMemoryBytes;
  }

  /** Estimated JS heap of all sessions (their ids, the sessions themselves), in bytes. */
  heapBytes(): number {
    this.recountAll();
    return this.budget.heapBytes;
  }

  /** What the memory budget counts (GET /limits, GET /session), every session counted as it is now. */
  memoryUsage() {
    this.recountAll();
    return this.budget.usage();
  }

  /** memoryUsage() for answers anyone may ask for often (GET /limits, GET /session): the walk at most once per USAGE_RECOUNT_MS. */
  reportedUsage() {
    if (this.ledger.walkDue()) this.recountAll();
    return this.budget.usage();
  }

  /** Count every live session as it is now (reports; requests recount their own session as they go). */
  private recountAll(): void {
    this.ledger.recountRemembered();
    for (const session of this.registry.liveSessions()) this.recount(session);
  }

  /** Seconds a caller refused for capacity is asked to wait. */
  retryAfterSeconds(): number {
    return retryAfterSeconds(this.config);
  }

  // The journal (DATA_DIR only; without it these do nothing), for the routes, shutdown, benches and tests.

  /** Run `write` on the journal before a change is applied (durability.ts); a promise when it is written in pieces. */
  journal(session: Session, write: (log: SessionJournal, at: number) => Promise<void> | undefined | void): Promise<void> | undefined {
    return this.durability?.journal(session, write);
  }

  /** FSYNC=always: settles once the session's logged changes are on stable storage; an answer that reports a change waits for this. */
  durable(session: Session): Promise<void> | undefined {
    return this.durability?.durable(session);
  }

  /** A large add-many's log record, encoded ahead of its write turn (writes.upsert writes it if the plan made then is the same). */
  async encodeUpsert(session: Session, records: VectorInput[], options: UpsertOptions): Promise<EncodedChange | undefined> {
    return this.durability?.encodeUpsert(session, records, options);
  }

  /** An import's log records, encoded in slices ahead of the step that applies it (writes.importPlan). */
  async encodeImport(plan: UpsertPlan): Promise<EncodedChange | undefined> {
    return this.durability?.encodeImport(plan);
  }

  /** What reopens cut off or set aside since the start (/metrics; zeros without DATA_DIR). */
  journalCounts(): JournalCounts {
    return this.log?.counts ?? { tailsCut: 0, recordsCut: 0, setAside: 0, otherFormat: 0 };
  }

  /** DATA_DIR only: the bytes of its files, as the journal counts them (0 without DATA_DIR). */
  dataDirBytes(): number {
    return this.log?.files.usage.used ?? 0;
  }

  /** Settles when the journal has no background work (compaction) under way. */
  async whenIdle(): Promise<void> {
    await this.log?.whenIdle();
  }

  /** Compact a session's log now (benches). */
  async compactLog(session: Session): Promise<void> {
    await this.log?.compactNow(session);
  }

  /** On shutdown: write each session's last access to its log. */
  flush(): void {
    this.log?.flush(this.registry.liveSessions());
  }
}
