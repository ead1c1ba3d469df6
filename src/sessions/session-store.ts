// SessionStore: issues tokens, finds a session by its token, expires idle
// sessions and frees their memory. With DATA_DIR it also keeps each session's
// log (persistence/session-journal.ts) and reopens sessions after a restart.
import { WASM_MEMORIES_OUTSIDE_SESSIONS } from '../limits/wasm-memories.js';
import type { Config } from '../config.js';
import { ApiError, apiError } from '../errors.js';
import { heapCapBytes } from '../limits/heap-limit.js';
import { JobSlots } from '../limits/job-slots.js';
import { MemoryBudget } from '../limits/memory-budget.js';
import type { JournalFs } from './persistence/journal-fs.js';
import { SyncNotTriedError } from './persistence/log-file.js';
import { SessionJournal, type EncodedChange, type JournalCounts } from './persistence/session-journal.js';
import type { UpsertOptions, UpsertPlan, VectorInput } from '../index/vector-index.js';
import { Session } from './session.js';
import { SessionWrites } from './session-writes.js';
import { SessionSearches } from './session-searches.js';
import type { KernelPool } from '../kernel/kernel-pool.js';
import { hashToken, isTokenOf, newToken } from './token.js';
import { SessionAddresses } from './session-addresses.js';

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

const MAX_REMEMBERED_EXPIRED = 100_000;

/** reportedUsage() walks every session at most this often. */
export const USAGE_RECOUNT_MS = 1000;

/** JS heap of a session with nothing stored: its objects, index, maps and kernel instance (estimated like heap-size.ts). */
export const SESSION_HEAP_BYTES = 16 * 1024;

/** JS heap of a token hash remembered without its session (expired, or dormant on disk): 64 hex characters, a map entry, a time. */
export const REMEMBERED_TOKEN_HEAP_BYTES = 160;

export class SessionStore {
  private readonly sessions = new Map<string, Session>();
  /** Hashes of recently expired tokens, so their callers hear SESSION_EXPIRED, oldest first. */
  private readonly expired = new Map<string, number>();
  private sweeper: NodeJS.Timeout | undefined;
  /** DATA_DIR only: the session logs. */
  private readonly log: SessionJournal | undefined;
  /** DATA_DIR only: sessions on disk not reopened since the restart (token hash -> last write). */
  private dormant = new Map<string, number>();
  /** Every change to a session's index goes through these (session-writes.ts). */
  readonly writes = new SessionWrites(this);
  /** Every search of a session's index goes through these (session-searches.ts). */
  readonly searches: SessionSearches;
  /** DATA_DIR only: sessions being rebuilt from their logs; every request with the token waits for the same one. */
  private readonly reopening = new Map<string, Promise<Session | undefined>>();
  /** True until restore() has listed the sessions on disk: tokens and new sessions are refused with 503 meanwhile. */
  restoring = false;
  /** MEMORY_BUDGET_BYTES over what sessions store and what requests hold in flight. */
  readonly budget: MemoryBudget;
  /** Live sessions per client address (MAX_SESSIONS_PER_ADDRESS), those on disk included. */
  private readonly addresses: SessionAddresses;
  /** What the remembered token hashes (expired, dormant) were last counted at in the budget's heap. */
  private rememberedCounted = 0;
  /** What each live session was last counted at in the budget (recount()). */
  private readonly counted = new WeakMap<Session, { linear: number; heap: number; metadata: number }>();

  /** `restoreNow` false: the sessions on disk are listed later, by restore() (the server listens first, so /readyz can answer). */
  constructor(
    private readonly config: Config,
    private readonly kernelModule: WebAssembly.Module,
    readonly now: Clock = Date.now,
    restoreNow = true,
    options: StoreOptions = {},
  ) {
    this.searches = new SessionSearches(options.pool ?? null, (session) => this.recount(session));
    this.budget = new MemoryBudget(config.memoryBudgetBytes, this.retryAfterSeconds(), heapCapBytes(config));
    this.addresses = new SessionAddresses(config.dataDir);
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
      if (restoreNow) {
        this.dormant = this.log.files.scan();
        this.addresses.load(this.dormant);
      } else this.restoring = true;
    }
  }

  /** List the sessions on disk without blocking the event loop (they are reopened on their first request). */
  async restore(): Promise<void> {
    if (!this.restoring || !this.log) return;
    const dormant = await this.log.files.scanAsync();
    await this.addresses.loadAsync(dormant);
    this.dormant = dormant;
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
    for (const session of this.sessions.values()) total += session.index.size;
    return total;
  }

  /** Live sessions, those on disk waiting to be reopened included. */
  get size(): number {
    return this.sessions.size + this.dormant.size + this.reopening.size;
  }

  /** DATA_DIR only: an import's log records, encoded in slices ahead of the step that applies it (writes.importPlan). */
  async encodeImport(plan: UpsertPlan): Promise<EncodedChange | undefined> {
    return this.log?.encodeImport(plan, this.now());
  }

  /**
   * DATA_DIR only: the log record of a large add-many, encoded in slices
   * ahead of its write turn (writes.upsert writes it if the plan made then
   * is the same). Undefined for a small batch, or one the turn will refuse.
   */
  async encodeUpsert(session: Session, records: VectorInput[], options: UpsertOptions): Promise<EncodedChange | undefined> {
    if (!this.log) return undefined;
    let plan: UpsertPlan;
    try {
      plan = session.index.prepareUpsert(records, options);
    } catch {
      return undefined;
    }
    return this.log.encodeUpsert(plan, this.now());
  }

  /**
   * Log a change before it is applied (only with DATA_DIR; session-writes.ts). A failed write
   * refuses the change with 503 and leaves nothing of it on disk, so nothing
   * is acknowledged that is not on disk. A promise when the change is written
   * in pieces (a large one): it is applied once that settles.
   */
  journal(session: Session, write: (log: SessionJournal, at: number) => Promise<void> | undefined | void): Promise<void> | undefined {
    if (!this.log) return undefined;
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
   * FSYNC=always: settles once the session's logged changes are on stable
   * storage; an answer that reports a change waits for this. After a failed
   * fdatasync that is once the log has been rewritten from memory and
   * fsynced; if that fails too, the caller hears 503 (the change stays in
   * memory and is written by the next rewrite, which the next change tries).
   */
  durable(session: Session): Promise<void> | undefined {
    const synced = this.log?.durable(session);
    return synced?.catch((err) => {
      if (err instanceof SyncNotTriedError) {
        console.error(`tempvec: the log of session ${session.id} could not be fsynced now: ${err.message}`);
        throw diskError('the server has no file handle free to confirm the change on disk; it was not confirmed, read the session back before retrying');
      }
      console.error(`tempvec: the log of session ${session.id} could not be confirmed on disk:`, (err as Error).message ?? err);
      throw diskError('the change could not be confirmed on disk; read the session back before retrying');
    });
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
    this.log?.flush(this.sessions.values());
  }

  /** A new session and the only copy of its token; `address`: the hash of the caller's address (session-addresses.ts), if counted. */
  create(address?: string): { token: string; session: Session } {
    this.assertRestored();
    if (address !== undefined) this.assertAddressRoom(address);
    // Expired sessions make room first (the sweeper's timer may not have run yet).
    if (this.size >= this.config.maxSessions) this.sweep();
    if (this.size >= this.config.maxSessions) {
      throw apiError('SERVER_AT_CAPACITY', `the server holds its maximum of ${this.config.maxSessions} sessions; try again later`, undefined, {
        'Retry-After': String(Math.ceil(Math.min(this.config.sessionTtlMs, 60_000) / 1000)),
      });
    }
    this.budget.assertStoredRoom(SESSION_HEAP_BYTES, "the server's memory budget is used up; no session was created, try again later", {}, SESSION_HEAP_BYTES);
    const token = newToken(this.config.instanceId);
    const session = new Session(hashToken(token), this.kernelModule, this.config.maxVectorsPerSession, this.config.sessionTtlMs, this.now());
    session.index.maxTextBytes = this.config.maxTextBytes;
    this.journal(session, (log) => log.create(session));
    this.admit(session);
    if (address !== undefined) this.addresses.add(session.tokenHash, address);
    return { token, session };
  }

  /** 429 TOO_MANY_SESSIONS when `address` holds MAX_SESSIONS_PER_ADDRESS live sessions (its expired ones go first). */
  private assertAddressRoom(address: string): void {
    const max = this.config.maxSessionsPerAddress;
    if (max === 0 || this.addresses.count(address) < max) return;
    const now = this.now();
    for (const hash of this.addresses.sessionsOf(address)) {
      const session = this.sessions.get(hash);
      const lastWrite = this.dormant.get(hash);
      if (session?.isExpired(now)) this.expire(session, now);
      else if (lastWrite !== undefined && now >= lastWrite + this.config.sessionTtlMs) this.forget(hash, now);
    }
    if (this.addresses.count(address) < max) return;
    throw apiError(
      'TOO_MANY_SESSIONS',
      `this address already holds ${max} live sessions, the most one address may; use one of them, or wait until one expires`,
      { maxSessionsPerAddress: max },
      { 'Retry-After': String(this.retryAfterSeconds()) },
    );
  }

  /** Live sessions created from `address` (those on disk included). */
  sessionsOfAddress(address: string): number {
    return this.addresses.count(address);
  }

  /**
   * The live session of `token`, its expiry slid forward; throws 401
   * otherwise. A session still on disk after a restart is reopened first,
   * in slices (a promise then).
   */
  authenticate(token: string): Session | Promise<Session> {
    // A token of another instance is answered like any token this one did not issue.
    if (!isTokenOf(token, this.config.instanceId)) throw apiError('INVALID_TOKEN', 'the token is not valid; request a new one with POST /token');
    this.assertRestored();
    const hash = hashToken(token);
    const session = this.sessions.get(hash);
    if (session) return this.use(session);
    if (this.dormant.has(hash) || this.reopening.has(hash)) return this.authenticateReopened(hash);
    throw this.unknown(hash);
  }

  private async authenticateReopened(hash: string): Promise<Session> {
    let pending = this.reopening.get(hash);
    if (!pending) {
      pending = this.reopen(hash).finally(() => this.reopening.delete(hash));
      this.reopening.set(hash, pending);
    }
    const session = await pending;
    if (!session) throw this.unknown(hash);
    return this.use(session);
  }

  /** A request uses a live session: expired, or touched (a read is logged now and then). */
  private use(session: Session): Session {
    const now = this.now();
    if (session.isExpired(now)) {
      this.expire(session, now);
      throw this.unknown(session.tokenHash);
    }
    session.touch(now);
    this.log?.touched(session);
    return session;
  }

  private unknown(hash: string) {
    if (this.expired.has(hash)) {
      return apiError('SESSION_EXPIRED', 'the session expired and its index was deleted; request a new token with POST /token');
    }
    return apiError('INVALID_TOKEN', 'the token is not valid; request a new one with POST /token');
  }

  /** Expire every idle session and forget old expired tokens. */
  sweep(): void {
    const now = this.now();
    for (const session of this.sessions.values()) if (session.isExpired(now)) this.expire(session, now);
    for (const [hash, lastWrite] of this.dormant) {
      if (now >= lastWrite + this.config.sessionTtlMs) this.forget(hash, now);
    }
    for (const [hash, at] of this.expired) {
      if (now - at < this.config.expiredTokenMemoryMs) break;
      this.expired.delete(hash);
    }
    this.log?.files.sweepSetAside(now, this.config.sessionTtlMs);
  }

  startSweeper(): void {
    this.stopSweeper();
    this.sweeper = setInterval(() => this.sweep(), this.config.sweepIntervalMs);
    this.sweeper.unref();
  }

  stopSweeper(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /**
   * Refuse (503 SERVER_AT_CAPACITY) a change, or a search, that would take
   * `session` to `bytesAfter` of linear memory and add `heapBytes` of JS heap
   * when that passes the budget (src/limits/memory-budget.ts): a change must
   * fit in the stored share, a search's working memory (a read) in the whole
   * budget. One that grows neither always passes.
   */
  assertMemoryBudget(session: Session, bytesAfter: number, what: 'change' | 'search' = 'change', heapBytes = 0, metadataBytes = 0): void {
    const linearGrowth = Math.max(0, bytesAfter - session.index.memoryBytes);
    const assert = what === 'search' ? this.budget.assertRoom : this.budget.assertStoredRoom;
    assert.call(
      this.budget,
      linearGrowth + heapBytes + metadataBytes,
      what === 'search'
        ? `the server's memory budget is used up: this search needs ${linearGrowth} more bytes of working memory; nothing was changed, try a smaller search (fewer queries, a lower topK or candidatePool) or try again later`
        : "the server's memory budget is used up; nothing was stored, try again later",
      {
        linearMemoryBytes: this.budget.linearMemoryBytes,
        heapBytes: this.budget.heapBytes,
      },
      heapBytes,
    );
  }

  /**
   * Count what `session` holds now in the budget (after every write, every
   * authenticated request, and when a session joins or leaves).
   */
  recount(session: Session): void {
    const live = this.sessions.get(session.tokenHash) === session;
    const now = live
      ? {
          linear: session.index.memoryBytes,
          heap: SESSION_HEAP_BYTES + session.index.heapBytes,
          metadata: session.index.metadataBytes + session.index.textBytes,
        }
      : { linear: 0, heap: 0, metadata: 0 };
    this.recountRemembered();
    const was = this.counted.get(session) ?? { linear: 0, heap: 0, metadata: 0 };
    this.budget.adjustStored(now.linear - was.linear, now.heap - was.heap, now.metadata - was.metadata);
    this.sessionsWithMemory += Number(now.linear > 0) - Number(was.linear > 0);
    if (live) this.counted.set(session, now);
    else this.counted.delete(session);
  }

  /**
   * Refuse (503) the first write of a session that has no WebAssembly memory
   * yet when the process holds maxWasmMemories: V8 reserves about 10 GiB of
   * address space for each and cannot reserve past about 13,000.
   */
  assertWasmMemoryFor(session: Session): void {
    if (session.index.memoryBytes > 0) return;
    this.assertWasmMemoryLeft('nothing was stored, try again later');
  }

  private assertWasmMemoryLeft(outcome: string): void {
    const held = this.wasmMemories();
    if (held + 1 > this.config.maxWasmMemories) {
      throw apiError(
        'SERVER_AT_CAPACITY',
        `the server holds its maximum of ${this.config.maxWasmMemories} WebAssembly memories; ${outcome}`,
        {
          maxWasmMemories: this.config.maxWasmMemories,
          wasmMemories: held,
        },
        { 'Retry-After': String(this.retryAfterSeconds()) },
      );
    }
  }

  /**
   * WebAssembly memories the process may hold: one per session with vectors,
   * one per session being reopened, plus those outside sessions (at most).
   */
  wasmMemories(): number {
    return this.sessionsWithMemory + this.reopening.size + WASM_MEMORIES_OUTSIDE_SESSIONS;
  }

  /** Live sessions counted (recount()) with a linear memory: kept as a count, since every first add asks. */
  private sessionsWithMemory = 0;

  /** A session joins the live ones; its searches ask the memory budget before they grow its memory. */
  private admit(session: Session): void {
    session.index.memoryGuard = (bytesAfter) => this.assertMemoryBudget(session, bytesAfter, 'search');
    const pool = this.searches.pool;
    if (pool) session.index.kernelDropped = (kernelId) => pool.release(kernelId);
    this.sessions.set(session.tokenHash, session);
    this.recount(session);
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

  /**
   * memoryUsage() for answers anyone may ask for often (GET /limits, GET
   * /session): the walk over every session (23 ms for 10,000) at most once
   * per USAGE_RECOUNT_MS; in between the budget's counters, which every
   * request keeps current for its own session.
   */
  reportedUsage() {
    const now = performance.now();
    if (now - this.lastRecountAll >= USAGE_RECOUNT_MS) {
      this.recountAll();
      this.lastRecountAll = now;
    }
    return this.budget.usage();
  }

  private lastRecountAll = -Infinity;

  /** Count every live session as it is now (reports; requests recount their own session as they go). */
  private recountAll(): void {
    this.recountRemembered();
    for (const session of this.sessions.values()) this.recount(session);
  }

  /** Count the token hashes remembered without a session (bounded: MAX_REMEMBERED_EXPIRED, MAX_SESSIONS) in the budget's heap. */
  private recountRemembered(): void {
    const now = (this.expired.size + this.dormant.size) * REMEMBERED_TOKEN_HEAP_BYTES;
    this.budget.adjustStored(0, now - this.rememberedCounted);
    this.rememberedCounted = now;
  }

  /** Seconds a caller refused for capacity is asked to wait. */
  retryAfterSeconds(): number {
    return Math.ceil(Math.min(this.config.sessionTtlMs, 60_000) / 1000);
  }

  /**
   * A session on disk, rebuilt from its log on the first request with its
   * token after a restart (the caller's dbOpenMs includes this). A damaged log
   * is reported and set aside; the caller hears SESSION_EXPIRED.
   */
  private async reopen(hash: string): Promise<Session | undefined> {
    const lastWrite = this.dormant.get(hash);
    const now = this.now();
    if (lastWrite === undefined || !this.log) return undefined;
    if (now >= lastWrite + this.config.sessionTtlMs) {
      this.forget(hash, now);
      return undefined;
    }
    try {
      this.assertWasmMemoryLeft('the session is kept on disk and reopens once one is free, try again later');
    } catch (err) {
      // This request counts as an access: the session does not expire while its caller is refused.
      this.dormant.set(hash, now);
      this.log.files.stampAccess(hash, now);
      throw err;
    }
    this.dormant.delete(hash);
    const outcome = await this.log.reopen(hash, (id, createdAt) => {
      const session = new Session(hash, this.kernelModule, this.config.maxVectorsPerSession, this.config.sessionTtlMs, now, { id, createdAt });
      session.index.maxTextBytes = this.config.maxTextBytes;
      return session;
    });
    const shortHash = `${hash.slice(0, 12)}...`;
    switch (outcome.t) {
      case 'reopened': {
        const { session, report } = outcome;
        // Its last access on record: the log's, or a later request that was refused (the file's time).
        session.touch(Math.max(session.lastAccessedAt, lastWrite));
        if (report.tornTail) {
          const lost =
            report.cutRecords > 0
              ? `${report.cutRecords} whole records after the damage were cut too (changes not yet on stable storage when the power failed; FSYNC=always acknowledges none of them)`
              : 'no whole record after it';
          console.warn(`tempvec: session ${session.id}: cut the log at its first torn or damaged record (${report.tornTail}); ${lost}`);
        }
        this.admit(session);
        return session;
      }
      case 'empty':
        this.addresses.remove(hash);
        return undefined; // its creation failed: it was never acknowledged
      case 'no-memory':
        this.dormant.set(hash, now);
        console.error(`tempvec: no memory to reopen a session (token hash ${shortHash}); it stays on disk: ${outcome.error.message}`);
        throw apiError('SERVER_AT_CAPACITY', 'the server could not reserve memory to reopen this session; it is kept on disk, try again later', undefined, {
          'Retry-After': String(this.retryAfterSeconds()),
        });
      case 'unreadable':
        // Unreadable for now (I/O error, no file handles): it stays on disk for a later try.
        this.dormant.set(hash, lastWrite);
        console.error(`tempvec: cannot read the log of a session (token hash ${shortHash}): ${outcome.error.message}`);
        throw diskError("the session's stored data could not be read; nothing was changed, try again later");
      case 'set-aside':
        this.addresses.remove(hash);
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

  /** Free a dropped session's memory now, not when the GC finds it; after a search still running on it. */
  private dropMemory(session: Session): void {
    void session.gate.write(() => {
      session.index.reset();
      this.recount(session);
    });
  }

  /** An expired session that is only on disk: delete its file, remember its token as expired. */
  private forget(hash: string, now: number): void {
    this.dormant.delete(hash);
    this.addresses.remove(hash);
    this.log?.remove(hash);
    this.rememberExpired(hash, now);
  }

  private expire(session: Session, now: number): void {
    this.sessions.delete(session.tokenHash);
    this.addresses.remove(session.tokenHash);
    this.dropMemory(session);
    this.log?.remove(session.tokenHash, session);
    this.rememberExpired(session.tokenHash, now);
  }

  private rememberExpired(hash: string, now: number): void {
    this.expired.set(hash, now);
    // Bounded: past this many, the oldest expired tokens answer INVALID_TOKEN instead.
    if (this.expired.size > MAX_REMEMBERED_EXPIRED) this.expired.delete(this.expired.keys().next().value!);
  }
}

function diskError(message = 'the change could not be saved to disk; nothing was changed, try again later') {
  return apiError('SERVER_AT_CAPACITY', message, undefined, { 'Retry-After': '60' });
}
