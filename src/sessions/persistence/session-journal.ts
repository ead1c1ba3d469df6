// Optional durability (DATA_DIR): one append-only log per session, named by
// its token hash (never the token). Every change is appended (one checked
// write, with a checksum; one larger than WRITE_PIECE_BYTES in pieces of that
// size, off the event loop, the session's write turn held until the last)
// before it is applied, and a write that fails is cut back off the file, so
// the log holds whole records only and nothing is acknowledged that is not in
// it. A restart reopens a session from its log on
// the first request with its token (dbOpenMs measures that). Nothing here
// runs without DATA_DIR: the store holds no journal then.
//
// By default (FSYNC=never) a change is acknowledged once the OS has it, which
// survives the process being killed; a power loss can lose the last moments.
// FSYNC=always acknowledges a change only after fdatasync: one per session
// for every batch of changes waiting (group commit). What survives what is
// written out in docs/operations.md (persistence).
//
// The layers, each in its file: records-v2.ts and record-decoder.ts (the
// binary format), log-reader.ts (reading a log in bounded pieces; the
// cut-or-refuse rule), log-file.ts (one log and its state: append, fence,
// repair, group commit), log-dir.ts (DATA_DIR's files and their bytes),
// snapshot.ts and compaction.ts (the session from memory to a new file,
// renamed over the log), reopen-log.ts, replay.ts and change.ts (a reopen),
// plan-records.ts (an add's records from its plan). This file ties them to
// the sessions.
import type { FsyncMode } from '../../config.js';
import type { Metadata } from '../../index/filter.js';
import type { UpsertPlan } from '../../index/types.js';
import type { Session } from '../session.js';
import { JobSlots } from '../../limits/job-slots.js';
import type { Reservation } from '../../limits/memory-budget.js';
import { compact, COPIES_MAX_BYTES, rewriteFromMemory, type CompactionEnv } from './compaction.js';
import { lockDir } from './dir-lock.js';
import { closeQuietly, describe, nodeFs, quietly, syncDirSync, writeAllSync, type JournalFs } from './journal-fs.js';
import { LogFile, type LogHost } from './log-file.js';
import { DiskUsage } from './disk-usage.js';
import { LogDir } from './log-dir.js';
import { encodeImport, encodeUpsert, importRecords, planBytes, ScratchBuffer, sealedFor, upsertRecord, type EncodedChange } from './plan-records.js';
import { encodeRecordV2, fileHeader, type RecordV2 } from './records-v2.js';
import { liveBytes, replayLog, type JournalCounts, type ReopenEnv, type ReopenOutcome } from './reopen-log.js';
import type { IndexChange } from '../../index/changes.js';
export type { EncodedChange } from './plan-records.js';
export type { JournalCounts, ReopenOutcome, RestoreReport } from './reopen-log.js';
import { Slices } from '../../limits/slices.js';

/** Bytes of records (rows, ids, metadata, texts) from which an add-many's is encoded ahead of its turn, in slices. */
const ENCODE_AHEAD_FROM_BYTES = 256 * 1024;

export interface JournalOptions {
  fsync?: FsyncMode;
  /** The file operations (tests inject faults here). */
  fs?: JournalFs;
  /** Longest step of a compaction or reopen between two turns of the event loop (Slices' default). */
  sliceMs?: number;
  /** Reopens, compactions and rewrites that run at once (PERSISTENCE_JOBS); the rest wait their turn. */
  slots?: JobSlots;
  /** Counts the buffers of those jobs (the memory budget's persistence bytes). */
  hold?: (bytes: number) => Reservation;
  /** A compaction gives up once its export keeps this many bytes of copies (COPIES_MAX_BYTES; tests lower it). */
  compactionCopiesMaxBytes?: number;
  /** Logs kept open between appends, at most (OPEN_LOGS_MAX); the least recently used is closed past it. */
  openLogsMax?: number;
  /** A change larger than this is written in pieces of at most this size, off the event loop (WRITE_PIECE_BYTES; tests lower it). */
  writePieceBytes?: number;
  /** DATA_DIR_MAX_BYTES: bytes of all files in DATA_DIR at most (0: no quota). */
  maxBytes?: number;
  /** MAX_SESSION_LOG_BYTES: bytes of one log at most (0: no cap). */
  maxLogBytes?: number;
  /** The store's clock (when a file is set aside). */
  now?: () => number;
  /** LOCK_STALE_MS: the DATA_DIR lock's heartbeat runs at a third of it (dir-lock.ts). */
  lockStaleMs?: number;
}

/** Logs kept open between appends: an append on an open log saves an open and a close (a third of its cost), without a descriptor per session. */
const OPEN_LOGS_MAX = 256;
/** The most bytes of a change written in one synchronous write on the event loop; a larger change goes out in pieces of this size, each an asynchronous write. */
export const WRITE_PIECE_BYTES = 1024 * 1024;

export class SessionJournal implements LogHost {
  // Constant after construction.
  readonly io: JournalFs;
  readonly fsync: FsyncMode;
  readonly now: () => number;
  private readonly sliceMs: number | undefined;
  private readonly slots: JobSlots;
  private readonly hold: (bytes: number) => Reservation;
  private readonly copiesMaxBytes: number;
  private readonly openLogsMax: number;
  private readonly writePieceBytes: number;
  /** An add's record, made and written at once in its write turn (never one written in pieces). */
  private readonly scratch: ScratchBuffer;
  /** DATA_DIR's files and their bytes (log-dir.ts). */
  readonly files: LogDir;

  // Changed as sessions come and go, logs open and close, and jobs run; each log's own state is its LogFile's.
  private readonly logs = new WeakMap<Session, LogFile>();
  /** Logs of the sessions in memory. */
  private readonly live = new Set<LogFile>();
  /** Logs open for appends, least recently used first. */
  private readonly open = new Set<LogFile>();
  /** Compactions and rewrites under way (whenIdle waits for them). */
  private readonly jobs = new Set<Promise<void>>();
  /** When the logs were last looked through for one to compact past the quota. */
  private roomSoughtAt = Number.NEGATIVE_INFINITY;
  readonly counts: JournalCounts = { tailsCut: 0, recordsCut: 0, setAside: 0, otherFormat: 0 };

  constructor(
    readonly dir: string,
    /** A read is recorded at most this often per session (its expiry after a restart may be this much early). */
    private readonly touchIntervalMs: number,
    options: JournalOptions = {},
  ) {
    this.io = options.fs ?? nodeFs;
    this.fsync = options.fsync ?? 'never';
    this.sliceMs = options.sliceMs;
    this.slots = options.slots ?? new JobSlots(2);
    this.hold = options.hold ?? uncounted;
    this.copiesMaxBytes = options.compactionCopiesMaxBytes ?? COPIES_MAX_BYTES;
    this.openLogsMax = options.openLogsMax ?? OPEN_LOGS_MAX;
    this.writePieceBytes = options.writePieceBytes ?? WRITE_PIECE_BYTES;
    this.scratch = new ScratchBuffer(this.writePieceBytes);
    this.now = options.now ?? Date.now;
    this.files = new LogDir(this.io, dir, this.fsync, new DiskUsage(options.maxBytes ?? 0, options.maxLogBytes ?? 0), this.now);
    lockDir(this.io, dir, options.lockStaleMs);
  }

  private fileOf(session: Session): LogFile {
    const file = this.logs.get(session);
    if (!file) throw new Error(`session ${session.id} has no log`);
    return file;
  }

  private track(session: Session, size: number, sequence: number): LogFile {
    const file = new LogFile(this, this.files.pathOf(session.tokenHash), session, size, sequence);
    this.logs.set(session, file);
    this.live.add(file);
    this.resized(file);
    return file;
  }

  syncDir(): Promise<void> {
    return this.files.syncDir();
  }

  stamp(path: string, at: number): void {
    this.files.stamp(path, at);
  }

  resized(file: LogFile): void {
    this.files.countLog(file.session.tokenHash, file.size);
  }

  private get env(): CompactionEnv {
    return {
      io: this.io,
      dir: this.dir,
      fsync: this.fsync,
      sliceMs: this.sliceMs,
      hold: this.hold,
      copiesMaxBytes: this.copiesMaxBytes,
      temp: (bytes) => this.files.usage.add(bytes),
    };
  }

  /** A rewrite from memory once its turn comes; a compaction under way (which gives up once it sees the log broken) ends first, outside any slot. */
  private async rewriteInTurn(file: LogFile): Promise<void> {
    while (file.compaction) await file.compaction;
    return this.slots.run(() => rewriteFromMemory(file, this.env));
  }

  /** A new session's log: the file header and its open record, fsynced (the directory too under FSYNC=always). */
  create(session: Session): void {
    const { io } = this;
    const path = this.files.pathOf(session.tokenHash);
    const bytes = Buffer.concat([fileHeader(), encodeRecordV2({ t: 'open', sessionId: session.id, createdAt: session.createdAt }, 1)]);
    const fd = io.openSync(path, 'wx', 0o600);
    try {
      writeAllSync(io, fd, bytes, 0);
      // Even with FSYNC=never: a log whose header does not read is then another format, never a power loss.
      io.fsyncSync(fd);
    } catch (err) {
      closeQuietly(io, fd);
      quietly(() => io.rmSync(path)); // left behind, it holds no whole record and is dropped on reopen
      throw err;
    }
    closeQuietly(io, fd);
    if (this.fsync === 'always') syncDirSync(io, this.dir);
    this.track(session, bytes.length, 1);
    this.stamp(path, session.lastAccessedAt);
  }

  /**
   * An add or add-many (`encoded` ahead by encodeUpsert: then only sealed and
   * written). A promise when it is written in pieces (larger than
   * writePieceBytes): the change is on the log once it settles, refused if
   * it rejects; nothing else may be appended to the session's log meanwhile.
   */
  upsert(session: Session, plan: UpsertPlan, at: number, encoded?: EncodedChange): Promise<void> | undefined {
    const file = this.fileOf(session);
    return this.write(file, at, sealedFor(encoded, 'upsert', plan, file.sequence + 1) ?? [upsertRecord(plan, at, file.sequence + 1, this.scratch.take)]);
  }

  /**
   * An import (one plan of any size) as parts that replay applies together,
   * or not at all: one checked write, or (larger than writePieceBytes) pieces
   * of one, and a failure cuts every part back off, so no later record
   * follows a partial import. Without `encoded`, a large one is encoded in
   * slices first.
   */
  import(session: Session, plan: UpsertPlan, at: number, encoded?: EncodedChange): Promise<void> | undefined {
    const file = this.fileOf(session);
    const sealed = sealedFor(encoded, 'import', plan, file.sequence + 1);
    if (sealed) return this.write(file, at, sealed);
    if (planBytes(plan) <= this.writePieceBytes) return this.write(file, at, importRecords(plan, at, file.sequence + 1));
    return this.encodeImport(plan, at).then((ahead) => this.write(file, at, sealedFor(ahead, 'import', plan, file.sequence + 1)!));
  }

  /** A change's records appended: at once, or in pieces (a promise) when they are larger than writePieceBytes. */
  private write(file: LogFile, at: number, records: Buffer[]): Promise<void> | undefined {
    let bytes = 0;
    for (const record of records) bytes += record.length;
    this.assertRoom(file, bytes);
    if (bytes > this.writePieceBytes) return file.appendInPieces(at, records, true, this.writePieceBytes);
    file.append(at, records, true);
    return undefined;
  }

  /**
   * An add-many's log record, encoded ahead of its write turn in slices
   * (upsert() then only seals and writes it, if the plan is the same);
   * undefined for a small one, made in its turn in well under a millisecond.
   */
  async encodeUpsert(plan: UpsertPlan, at: number): Promise<EncodedChange | undefined> {
    if (planBytes(plan) < ENCODE_AHEAD_FROM_BYTES) return undefined;
    return encodeUpsert(plan, at, new Slices(this.sliceMs));
  }

  /** An import's log records (its parts), encoded ahead in slices. */
  async encodeImport(plan: UpsertPlan, at: number): Promise<EncodedChange> {
    return encodeImport(plan, at, new Slices(this.sliceMs));
  }

  /** A live change's log record (session-writes.ts): a promise when it is written in pieces. */
  record(session: Session, change: IndexChange, at: number, encoded?: EncodedChange): Promise<void> | undefined {
    switch (change.t) {
      case 'upsert':
        return this.upsert(session, change.plan, at, encoded);
      case 'import':
        return this.import(session, change.plan, at, encoded);
      case 'metadata':
        return this.metadata(session, change.id, change.metadata, at);
      case 'delete':
        return this.delete(session, change.ids, at);
      case 'renew': {
        const file = this.fileOf(session);
        return this.write(file, at, [encodeRecordV2({ t: 'renew', at, ids: change.ids, expiresAt: change.expiresAt }, file.sequence + 1)]);
      }
      case 'clear':
        this.clear(session, at);
        return undefined;
      default:
        this.reset(session, at);
        return undefined;
    }
  }

  /** A metadata change (in pieces, a promise, when it is that large: see upsert()). */
  metadata(session: Session, id: string, metadata: Metadata, at: number): Promise<void> | undefined {
    const file = this.fileOf(session);
    return this.write(file, at, [encodeRecordV2({ t: 'metadata', at, id, metadata: utf8.encode(JSON.stringify(metadata)) }, file.sequence + 1)]);
  }

  /** A delete of `ids` (in pieces, a promise, when there are many: see upsert()). */
  delete(session: Session, ids: string[], at: number): Promise<void> | undefined {
    const file = this.fileOf(session);
    return this.write(file, at, [encodeRecordV2({ t: 'delete', at, ids }, file.sequence + 1)]);
  }

  clear(session: Session, at: number): void {
    this.append(session, at, { t: 'clear', at });
  }

  reset(session: Session, at: number): void {
    this.append(session, at, { t: 'reset', at });
  }

  /**
   * Record a read now and then, so a restart knows the session was still in
   * use. Best-effort: a full disk never fails a read (the session may then
   * expire up to one touch interval early after a restart).
   */
  touched(session: Session): void {
    const file = this.logs.get(session);
    const at = session.lastAccessedAt;
    if (!file?.touchDue(at, this.touchIntervalMs)) return;
    try {
      this.append(session, at, { t: 'touch', at });
    } catch (err) {
      console.warn(`tempvec: could not record a read of session ${session.id} (${describe(err)}); the read is answered anyway`);
    }
  }

  /** On shutdown: record the last access of every session whose latest read is not on disk yet. */
  flush(sessions: Iterable<Session>): void {
    for (const session of sessions) {
      const file = this.logs.get(session);
      const at = session.lastAccessedAt;
      if (!file || at <= file.persistedAccess) continue;
      try {
        this.append(session, at, { t: 'touch', at });
      } catch (err) {
        console.error(`tempvec: could not record the last access of session ${session.id}: ${describe(err)}`);
      }
    }
  }

  /**
   * FSYNC=always: a promise that settles once every change appended to the
   * session's log so far is on stable storage (it rejects if fdatasync
   * fails). Changes appended while one fdatasync runs share the next one.
   * Undefined when there is nothing to wait for.
   */
  durable(session: Session): Promise<void> | undefined {
    return this.logs.get(session)?.durable();
  }

  /** The session leaves the store: nothing more is written for it (its file stays, see remove()). */
  close(session: Session): void {
    const file = this.logs.get(session);
    if (!file) return;
    file.close();
    this.open.delete(file);
    this.live.delete(file);
  }

  /** Delete a session's log (it expired). Best-effort: a file left behind is an expired session the next start deletes. */
  remove(tokenHash: string, session?: Session): void {
    if (session) this.close(session);
    this.files.removeLog(tokenHash);
  }

  /** Compact a session's log now (benches; otherwise a log is compacted as it grows). */
  async compactNow(session: Session): Promise<void> {
    const file = this.fileOf(session);
    if (!file.compacting) this.compactionDue(file);
    await this.whenIdle();
  }

  /** Settles when no compaction or rewrite is under way (tests, benches and shutdown). */
  async whenIdle(): Promise<void> {
    while (this.jobs.size > 0) await Promise.allSettled([...this.jobs]);
  }

  /**
   * Rebuild a session from its log (replay.ts), reading it a bounded piece at
   * a time and giving the event loop back between steps, in its turn among
   * the persistence jobs. A torn or damaged tail is cut off the file and
   * reported (point-in-time recovery); a damaged record that was on stable
   * storage moves the file aside (`.corrupt`), and a log of another format
   * (`.other-format`), touching no other session. A log with no whole record
   * (a session whose creation failed, so never acknowledged) is deleted.
   * What it came to is decided here, once: see ReopenOutcome.
   */
  reopen(tokenHash: string, make: (sessionId: string, createdAt: number) => Session): Promise<ReopenOutcome> {
    return this.slots.run(() => replayLog(this.reopenEnv, tokenHash, make));
  }

  private get reopenEnv(): ReopenEnv {
    return {
      io: this.io,
      files: this.files,
      sliceMs: this.sliceMs,
      hold: this.hold,
      counts: this.counts,
      track: (session, size, sequence) => {
        const file = this.track(session, size, sequence);
        // Compacted by what it holds: frequent restarts must not let a log grow to twice its size again each time.
        file.holds(liveBytes(session));
        if (file.due()) this.compactionDue(file);
      },
    };
  }

  /**
   * Refuse (507) a change of `bytes` that would pass MAX_SESSION_LOG_BYTES or
   * DATA_DIR_MAX_BYTES, after starting a compaction that may make room: the
   * refused log's when what it appended since its last one could hold the
   * change, else (past the quota, nothing compacting) the log that appended most.
   * A clear or reset (a few bytes that let the next compaction shrink the log) is never refused.
   */
  private assertRoom(file: LogFile, bytes: number): void {
    try {
      this.files.usage.assertRoom(file.size, bytes, false);
    } catch (err) {
      const own = file.size + bytes > this.files.usage.maxLogBytes && this.files.usage.maxLogBytes > 0;
      let candidate: LogFile | null = file.appended >= bytes ? file : null;
      // Every live log looked at, at most once a second (refusals can come fast while the quota is full).
      if (!candidate && !own && this.jobs.size === 0 && this.now() - this.roomSoughtAt >= 1000) {
        this.roomSoughtAt = this.now();
        for (const other of this.live) if (other.appended > (candidate?.appended ?? 0)) candidate = other;
      }
      if (candidate?.mayCompact()) this.compactionDue(candidate);
      if (!candidate?.compacting) throw err;
      this.files.usage.assertRoom(file.size, bytes, true);
    }
  }

  /** A clear, reset or touch record appended to the session's log. */
  private append(session: Session, at: number, record: Extract<RecordV2, { t: 'clear' | 'reset' | 'touch' }>): void {
    const file = this.fileOf(session);
    file.append(at, [encodeRecordV2(record, file.sequence + 1)], record.t !== 'touch');
  }

  /** After a failed fsync: rewrite the log from memory (the file asks for one at a time). */
  rewrite(file: LogFile): Promise<void> {
    const job = this.rewriteInTurn(file).catch((err) => {
      quietly(() => this.io.rmSync(`${file.path}.tmp`));
      if (!file.closed)
        console.error(`tempvec: could not rewrite the log of session ${file.sessionId} from memory; its changes are still refused: ${describe(err)}`);
      throw err;
    });
    this.background(job.catch(() => {}));
    return job;
  }

  /** A job whenIdle() waits for (it settles, never rejects). */
  private background(job: Promise<void>): void {
    this.jobs.add(job);
    void job.then(() => this.jobs.delete(job));
  }

  used(file: LogFile): void {
    this.open.delete(file);
    this.open.add(file);
    for (const oldest of this.open) {
      if (this.open.size <= this.openLogsMax) break;
      this.open.delete(oldest);
      oldest.release();
    }
  }

  compactionDue(file: LogFile): void {
    const job = this.slots
      .run(() => compact(file, this.env))
      .then(
        () => file.compactionSucceeded(),
        (err) => {
          quietly(() => this.io.rmSync(`${file.path}.tmp`));
          if (!file.closed) console.error(`tempvec: could not compact the log of session ${file.sessionId}; the old log is kept: ${describe(err)}`);
          // The log is gone (deleted with its session's directory): nothing to try again.
          if ((err as { code?: string }).code !== 'ENOENT') this.retryCompaction(file);
        },
      );
    file.compactionStarted(job);
    this.background(job);
  }

  /**
   * After a failed compaction (a clear under it, an I/O error): tried again
   * after a pause that doubles with each failure in a row (1 s to 1 min),
   * on a timer or the next append, not once the log has grown as much again.
   */
  private retryCompaction(file: LogFile): void {
    const pauseMs = file.compactionFailed();
    setTimeout(() => {
      if (file.due()) this.compactionDue(file);
    }, pauseMs).unref();
  }
}

const utf8 = new TextEncoder();

function uncounted(bytes: number): Reservation {
  return { bytes, grow() {}, release() {} };
}
