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
// The layers, each in its file: records-v2.ts (the binary format),
// log-reader.ts (reading a log in bounded pieces; the cut-or-refuse rule),
// log-file.ts (one log: append, fence, repair, group commit), snapshot.ts
// and compaction.ts (the session from memory to a new file, renamed over the
// log), replay.ts and change.ts (a reopen), plan-records.ts (an add's
// records from its plan). This file ties them to the sessions.
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError, type FsyncMode } from '../../config.js';
import type { Metadata } from '../../index/filter.js';
import type { UpsertPlan } from '../../index/types.js';
import { isWasmAllocationFailure } from '../../limits/wasm-memories.js';
import type { Session } from '../session.js';
import { JobSlots } from '../../limits/job-slots.js';
import type { Reservation } from '../../limits/memory-budget.js';
import { compact, COPIES_MAX_BYTES, rewriteFromMemory, type CompactionEnv } from './compaction.js';
import { lockDir } from './dir-lock.js';
import { closeQuietly, describe, nodeFs, quietly, syncDir, syncDirSync, writeAllSync, type JournalFs } from './journal-fs.js';
import { LogFile, type LogHost } from './log-file.js';
import { CHUNK_BYTES, LogReader } from './log-reader.js';
import { DiskUsage } from './disk-usage.js';
import { encodeImport, encodeUpsert, importRecords, planBytes, ScratchBuffer, sealedFor, upsertRecord, type EncodedChange } from './plan-records.js';
import { CorruptLogError, encodeRecordV2, fileHeader, FormatError, type RecordV2 } from './records-v2.js';
import { replay } from './replay.js';
import type { IndexChange } from '../../index/changes.js';
export type { EncodedChange } from './plan-records.js';
import { Slices } from '../../limits/slices.js';

const LOG_NAME = /^([0-9a-f]{64})\.log$/;
/** A log set aside (setAside()): kept for the operator until the session TTL has passed, then deleted. */
const SET_ASIDE = /^[0-9a-f]{64}\.log\.(corrupt|other-format)$/;
/** Bytes of records (rows, ids, metadata, texts) from which an add-many's is encoded ahead of its turn, in slices. */
const ENCODE_AHEAD_FROM_BYTES = 256 * 1024;
/** What a reopen found wrong, for the operator's log. */
export interface RestoreReport {
  tornTail: string | null;
  /** Whole records after the damage, cut with it. */
  cutRecords: number;
}

/** What reopens found, since the start (/metrics). */
export interface JournalCounts {
  /** Reopens that cut a torn or damaged tail off a log. */
  tailsCut: number;
  /** Whole records found after such damage and cut with it (FSYNC=never: changes lost to a power loss). */
  recordsCut: number;
  /** Logs set aside (renamed .corrupt): a record that was on stable storage is damaged. */
  setAside: number;
  /** Logs set aside (renamed .other-format): not version 2 of this format (another version, or not a tempvec log). */
  otherFormat: number;
}

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

/** A failed compaction is tried again after this pause, doubled with each failure in a row up to COMPACT_RETRY_MAX_MS. */
const COMPACT_RETRY_MS = 1000;
const COMPACT_RETRY_MAX_MS = 60_000;
/** Logs kept open between appends: an append on an open log saves an open and a close (a third of its cost), without a descriptor per session. */
const OPEN_LOGS_MAX = 256;
/** The most bytes of a change written in one synchronous write on the event loop; a larger change goes out in pieces of this size, each an asynchronous write. */
export const WRITE_PIECE_BYTES = 1024 * 1024;

export class SessionJournal implements LogHost {
  private readonly files = new WeakMap<Session, LogFile>();
  readonly io: JournalFs;
  readonly fsync: FsyncMode;
  private readonly sliceMs: number | undefined;
  /** Compactions under way (whenIdle waits for them). */
  private readonly jobs = new Set<Promise<void>>();
  private readonly slots: JobSlots;
  private readonly hold: (bytes: number) => Reservation;
  private readonly copiesMaxBytes: number;
  /** Logs open for appends, least recently used first. */
  private readonly open = new Set<LogFile>();
  private readonly openLogsMax: number;
  private readonly writePieceBytes: number;
  /** An add's record, made and written at once in its write turn (never one written in pieces). */
  private readonly scratch: ScratchBuffer;
  readonly counts: JournalCounts = { tailsCut: 0, recordsCut: 0, setAside: 0, otherFormat: 0 };
  /** The bytes of DATA_DIR, counted as they change, and the caps on them. */
  readonly usage: DiskUsage;
  /** Bytes of each session's log, as counted (token hash -> bytes): those on disk only included. */
  private readonly logBytes = new Map<string, number>();
  /** Logs of the sessions in memory. */
  private readonly live = new Set<LogFile>();
  /** When the logs were last looked through for one to compact past the quota. */
  private roomSoughtAt = Number.NEGATIVE_INFINITY;
  /** Files set aside (path -> bytes, and when they were set aside): deleted once the session TTL has passed. */
  private readonly aside = new Map<string, { bytes: number; at: number }>();
  readonly now: () => number;

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
    this.usage = new DiskUsage(options.maxBytes ?? 0, options.maxLogBytes ?? 0);
    this.now = options.now ?? Date.now;
    this.checkDir();
    lockDir(this.io, dir, options.lockStaleMs);
  }

  /** Start-up check: DATA_DIR exists (or can be made) and takes a file; ConfigError otherwise. */
  private checkDir(): void {
    const { io, dir } = this;
    try {
      // Logs hold callers' vectors and metadata: readable by this user only.
      io.mkdirSync(dir, 0o700);
    } catch (err) {
      throw new ConfigError(`DATA_DIR "${dir}" does not exist and cannot be created (${describe(err)})`);
    }
    const probe = join(dir, `.tempvec-probe-${process.pid}`);
    try {
      const fd = io.openSync(probe, 'w', 0o600);
      try {
        writeAllSync(io, fd, Buffer.from('probe\n'), 0);
        if (this.fsync === 'always') io.fsyncSync(fd);
      } finally {
        closeQuietly(io, fd);
        io.rmSync(probe);
      }
    } catch (err) {
      throw new ConfigError(`DATA_DIR "${dir}" is not writable, so no session could be saved (${describe(err)})`);
    }
  }

  private pathOf(tokenHash: string): string {
    return join(this.dir, `${tokenHash}.log`);
  }

  private fileOf(session: Session): LogFile {
    const file = this.files.get(session);
    if (!file) throw new Error(`session ${session.id} has no log`);
    return file;
  }

  private track(session: Session, size: number, sequence: number): LogFile {
    const file = new LogFile(this, this.pathOf(session.tokenHash), session, size, sequence);
    this.files.set(session, file);
    this.live.add(file);
    this.resized(file);
    return file;
  }

  /** Count a log at `bytes` (undefined: gone). */
  private countLog(tokenHash: string, bytes: number | undefined): void {
    this.usage.add((bytes ?? 0) - (this.logBytes.get(tokenHash) ?? 0));
    if (bytes === undefined) this.logBytes.delete(tokenHash);
    else this.logBytes.set(tokenHash, bytes);
  }

  private countAside(path: string, bytes: number, at: number): void {
    this.aside.set(path, { bytes, at });
    this.usage.add(bytes);
  }

  /** Delete the files set aside (.corrupt, .other-format) `ttlMs` or longer ago: kept that long for the operator to look at. */
  sweepSetAside(now: number, ttlMs: number): void {
    for (const [path, { bytes, at }] of this.aside) {
      if (now < at + ttlMs) continue;
      try {
        this.io.rmSync(path);
      } catch (err) {
        console.error(`tempvec: could not delete ${path}, a log set aside: ${describe(err)}`);
        continue;
      }
      this.aside.delete(path);
      this.usage.add(-bytes);
    }
  }

  syncDir(): Promise<void> {
    return syncDir(this.io, this.dir);
  }

  resized(file: LogFile): void {
    this.countLog(file.session.tokenHash, file.size);
  }

  private get env(): CompactionEnv {
    return {
      io: this.io,
      dir: this.dir,
      fsync: this.fsync,
      sliceMs: this.sliceMs,
      hold: this.hold,
      copiesMaxBytes: this.copiesMaxBytes,
      temp: (bytes) => this.usage.add(bytes),
    };
  }

  /** A rewrite from memory once its turn comes; a compaction under way (which gives up once it sees the log broken) ends first, outside any slot. */
  private async rewriteInTurn(file: LogFile): Promise<void> {
    while (file.compaction) await file.compaction;
    return this.slots.run(() => rewriteFromMemory(file, this.env));
  }

  /** Sessions on disk: token hash -> last recorded access (the file's mtime, see stamp()); their bytes counted. */
  scan(): Map<string, number> {
    const found = new Map<string, number>();
    for (const name of this.io.readdirSync(this.dir)) {
      // A compaction that a crash interrupted: the log it was replacing is intact.
      if (name.endsWith('.log.tmp')) this.io.rmSync(join(this.dir, name));
      else this.found(found, name, this.io.statSync(join(this.dir, name)));
    }
    return found;
  }

  /** The same as scan(), with the event loop free between files (the server answers /readyz meanwhile). */
  async scanAsync(): Promise<Map<string, number>> {
    const found = new Map<string, number>();
    for (const name of await readdir(this.dir)) {
      if (name.endsWith('.log.tmp')) await rm(join(this.dir, name), { force: true });
      else this.found(found, name, await stat(join(this.dir, name)));
    }
    return found;
  }

  /** A file scan() found: a session's log, or one set aside (both counted in DATA_DIR's bytes). */
  private found(sessions: Map<string, number>, name: string, { mtimeMs, size }: { mtimeMs: number; size: number }): void {
    const match = LOG_NAME.exec(name);
    if (match) {
      sessions.set(match[1], mtimeMs);
      this.countLog(match[1], size);
    } else if (SET_ASIDE.test(name)) this.countAside(join(this.dir, name), size, mtimeMs);
  }

  /** A new session's log: the file header and its open record, fsynced (the directory too under FSYNC=always). */
  create(session: Session): void {
    const { io } = this;
    const path = this.pathOf(session.tokenHash);
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
    const file = this.files.get(session);
    const at = session.lastAccessedAt;
    if (!file || at - Math.max(file.persistedAccess, file.touchTriedAt) < this.touchIntervalMs) return;
    file.touchTriedAt = at;
    try {
      this.append(session, at, { t: 'touch', at });
    } catch (err) {
      console.warn(`tempvec: could not record a read of session ${session.id} (${describe(err)}); the read is answered anyway`);
    }
  }

  /** On shutdown: record the last access of every session whose latest read is not on disk yet. */
  flush(sessions: Iterable<Session>): void {
    for (const session of sessions) {
      const file = this.files.get(session);
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
    return this.files.get(session)?.durable();
  }

  /** The session leaves the store: nothing more is written for it (its file stays, see remove()). */
  close(session: Session): void {
    const file = this.files.get(session);
    if (!file) return;
    file.close();
    this.open.delete(file);
    this.live.delete(file);
  }

  /** Delete a session's log (it expired). Best-effort: a file left behind is an expired session the next start deletes. */
  remove(tokenHash: string, session?: Session): void {
    if (session) this.close(session);
    try {
      this.io.rmSync(this.pathOf(tokenHash));
      this.countLog(tokenHash, undefined);
    } catch (err) {
      console.error(`tempvec: could not delete the log of an expired session: ${describe(err)}`);
    }
  }

  /** Settles when no compaction is under way (tests, benches and shutdown). */
  /** Compact a session's log now (benches; otherwise a log is compacted as it grows). */
  async compactNow(session: Session): Promise<void> {
    const file = this.fileOf(session);
    if (!file.compacting) this.compactionDue(file);
    await this.whenIdle();
  }

  async whenIdle(): Promise<void> {
    while (this.jobs.size > 0) await Promise.allSettled([...this.jobs]);
  }

  /**
   * Rebuild a session from its log (replay.ts), reading it a bounded piece at
   * a time and giving the event loop back between steps. A torn or damaged
   * tail is cut off the file and reported (point-in-time recovery); a
   * damaged record that was on stable storage moves the file aside
   * (`.corrupt`) and throws CorruptLogError, and a log of another format
   * (`.other-format`) FormatError, touching no other session. A log with no
   * whole record (a session whose creation failed, so never acknowledged)
   * is deleted: null.
   */
  restore(tokenHash: string, make: (sessionId: string, createdAt: number) => Session): Promise<{ session: Session; report: RestoreReport } | null> {
    return this.slots.run(() => this.reopen(tokenHash, make));
  }

  private async reopen(
    tokenHash: string,
    make: (sessionId: string, createdAt: number) => Session,
  ): Promise<{ session: Session; report: RestoreReport } | null> {
    const path = this.pathOf(tokenHash);
    const slices = new Slices(this.sliceMs);
    const held = this.hold(0);
    const fd = await this.io.open(path, 'r');
    let replayed: Awaited<ReturnType<typeof replay>>;
    try {
      const reader = new LogReader((out, position) => this.io.read(fd, out, 0, out.length, position), this.io.statSync(path).size, CHUNK_BYTES, held);
      replayed = await replay(reader, make, slices, held);
    } catch (err) {
      // No memory for it now: the log is sound and stays as it is for a later reopen.
      if (isWasmAllocationFailure(err)) throw err;
      if (err instanceof FormatError) {
        this.setAside(tokenHash, 'other-format');
        this.counts.otherFormat++;
        throw err;
      }
      if (err instanceof CorruptLogError || !isIoError(err)) {
        this.setAside(tokenHash, 'corrupt');
        this.counts.setAside++;
        throw err instanceof CorruptLogError ? err : new CorruptLogError(`cannot replay: ${(err as Error).message}`);
      }
      throw err;
    } finally {
      held.release();
      await this.io.close(fd).catch(() => {});
    }
    const { session, end, sequence } = replayed;
    if (!session) {
      this.io.rmSync(path);
      this.countLog(tokenHash, undefined);
      return null;
    }
    try {
      if (end.tornTail) this.cut(path, end.validBytes);
    } catch (err) {
      session.index.reset();
      throw err;
    }
    if (end.tornTail) {
      this.counts.tailsCut++;
      this.counts.recordsCut += end.cutRecords;
    }
    const file = this.track(session, end.validBytes, sequence);
    // Compacted by what it holds: frequent restarts must not let a log grow to twice its size again each time.
    file.holds(liveBytes(session));
    if (file.due()) this.compactionDue(file);
    return { session, report: { tornTail: end.tornTail, cutRecords: end.cutRecords } };
  }

  /**
   * Cut a torn tail off (a failure throws: the session is not reopened on a log that could not be repaired).
   * Fsynced in both modes before the log takes a record: a lost truncate would bring back the records behind
   * a new one that filled the cut exactly (their sequence numbers run on), after a second power loss.
   */
  private cut(path: string, size: number): void {
    const fd = this.io.openSync(path, 'r+');
    try {
      this.io.ftruncateSync(fd, size);
      this.io.fsyncSync(fd);
    } finally {
      closeQuietly(this.io, fd);
    }
  }

  /** Rename a log that cannot be replayed aside (kept for the operator until the session TTL has passed, sweepSetAside()). */
  private setAside(tokenHash: string, why: 'corrupt' | 'other-format'): void {
    const path = this.pathOf(tokenHash);
    const to = `${path}.${why}`;
    quietly(() => {
      this.io.renameSync(path, to);
      const bytes = this.logBytes.get(tokenHash) ?? 0;
      this.countLog(tokenHash, undefined);
      // A log set aside before (the same token's) is replaced: counted once.
      this.usage.add(-(this.aside.get(to)?.bytes ?? 0));
      this.countAside(to, bytes, this.now());
    });
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
      this.usage.assertRoom(file.size, bytes, false);
    } catch (err) {
      const own = file.size + bytes > this.usage.maxLogBytes && this.usage.maxLogBytes > 0;
      let candidate: LogFile | null = file.appended >= bytes ? file : null;
      // Every live log looked at, at most once a second (refusals can come fast while the quota is full).
      if (!candidate && !own && this.jobs.size === 0 && this.now() - this.roomSoughtAt >= 1000) {
        this.roomSoughtAt = this.now();
        for (const other of this.live) if (other.appended > (candidate?.appended ?? 0)) candidate = other;
      }
      if (candidate && !candidate.compacting && !candidate.broken && this.now() >= candidate.compactAfter) this.compactionDue(candidate);
      if (!candidate?.compacting) throw err;
      this.usage.assertRoom(file.size, bytes, true);
    }
  }

  /** A clear, reset or touch record appended to the session's log. */
  private append(session: Session, at: number, record: Extract<RecordV2, { t: 'clear' | 'reset' | 'touch' }>): void {
    const file = this.fileOf(session);
    file.append(at, [encodeRecordV2(record, file.sequence + 1)], record.t !== 'touch');
  }

  /** After a failed fsync: rewrite the log from memory (one attempt at a time; each call after a failure tries again). */
  rewrite(file: LogFile): Promise<void> {
    if (!file.rewriting) {
      const job = this.rewriteInTurn(file)
        .catch((err) => {
          quietly(() => this.io.rmSync(`${file.path}.tmp`));
          if (!file.closed)
            console.error(`tempvec: could not rewrite the log of session ${file.sessionId} from memory; its changes are still refused: ${describe(err)}`);
          throw err;
        })
        .finally(() => {
          file.rewriting = null;
          this.jobs.delete(settled);
        });
      const settled = job.catch(() => {});
      this.jobs.add(settled);
      file.rewriting = job;
    }
    return file.rewriting;
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
    file.compacting = true;
    const job = this.slots
      .run(() => compact(file, this.env))
      .then(
        () => {
          file.compactFailures = 0;
        },
        (err) => {
          quietly(() => this.io.rmSync(`${file.path}.tmp`));
          if (!file.closed) console.error(`tempvec: could not compact the log of session ${file.sessionId}; the old log is kept: ${describe(err)}`);
          // The log is gone (deleted with its session's directory): nothing to try again.
          if ((err as { code?: string }).code !== 'ENOENT') this.retryCompaction(file);
        },
      )
      .finally(() => {
        file.compacting = false;
        file.compaction = null;
        this.jobs.delete(job);
      });
    file.compaction = job;
    this.jobs.add(job);
  }

  /**
   * After a failed compaction (a clear under it, an I/O error): tried again
   * after a pause that doubles with each failure in a row (1 s to 1 min),
   * on a timer or the next append, not once the log has grown as much again.
   */
  private retryCompaction(file: LogFile): void {
    const pauseMs = Math.min(COMPACT_RETRY_MAX_MS, COMPACT_RETRY_MS * 2 ** file.compactFailures);
    file.compactFailures++;
    file.compactAfter = this.now() + pauseMs;
    setTimeout(() => {
      if (file.due()) this.compactionDue(file);
    }, pauseMs).unref();
  }

  /** Record an access to a session that stays on disk (a reopen refused for capacity), so its expiry counts from it. */
  stampAccess(tokenHash: string, at: number): void {
    this.stamp(this.pathOf(tokenHash), at);
  }

  /**
   * A log's mtime is its session's last recorded access, on the store's clock
   * (the same as the wall clock in production): scan() reads it to expire
   * sessions on disk without opening their logs. Best-effort: a stale mtime
   * only makes the session expire early after a restart.
   */
  stamp(path: string, at: number): void {
    quietly(() => this.io.utimesSync(path, at / 1000, at / 1000));
  }
}

/** About the bytes a compaction would write for `session` (its rows as float32, ids, metadata and texts as stored). */
export function liveBytes(session: Session): number {
  const { index } = session;
  const dimensions = index.getConfig().dimensions ?? 0;
  const stats = index.stats();
  return index.size * (dimensions * 4 + ROW_OVERHEAD_BYTES) + stats.heapBytes + stats.metadata.jsonBytes + stats.text.jsonBytes;
}

/** A row's bytes in a snapshot besides its vector, id, metadata and text (lengths, offsets), about. */
const ROW_OVERHEAD_BYTES = 16;

/** An I/O error (the log is unreadable for now and stays on disk), not a log that cannot be replayed. */
function isIoError(err: unknown): boolean {
  const { code } = err as { code?: unknown };
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code);
}

const utf8 = new TextEncoder();

function uncounted(bytes: number): Reservation {
  return { bytes, grow() {}, release() {} };
}
