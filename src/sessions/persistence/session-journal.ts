// Optional durability (DATA_DIR): one append-only log per session, named by
// its token hash (never the token). Every change is appended (one checked
// write, with a checksum) before it is applied, and a write that fails is cut
// back off the file, so the log holds whole records only and nothing is
// acknowledged that is not in it. A restart reopens a session from its log on
// the first request with its token (dbOpenMs measures that). Nothing here
// runs without DATA_DIR: the store holds no journal then.
//
// By default (FSYNC=never) a change is acknowledged once the OS has it, which
// survives the process being killed; a power loss can lose the last moments.
// FSYNC=always acknowledges a change only after fdatasync: one per session
// for every batch of changes waiting (group commit). What survives what is
// written out in docs/operations.md (persistence).
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { crc32 } from 'node:zlib';
import { ConfigError, type FsyncMode } from '../../config.js';
import type { Metadata, UpsertPlan, VectorInput } from '../../index/vector-index.js';
import { isWasmAllocationFailure } from '../../limits/wasm-memories.js';
import type { Session } from '../session.js';
import { lockDir } from './dir-lock.js';
import { nodeFs, readExact, readExactSync, writeAll, writeAllSync, type JournalFs } from './journal-fs.js';
import { CHUNK_BYTES, LogReader } from './log-reader.js';
import { CorruptLogError, encodeRecordV2, encodeRows, fileHeader, FormatError, RECORD_HEADER_BYTES, sealRecord, typeOf, type RecordV2, type RowSource, type RowsHead } from './records-v2.js';
import { replay } from './replay.js';
import { Slices } from './slices.js';
import { snapshotRecords } from './snapshot.js';

/** Records per import part: keeps each part far below the framing's size cap, however large the import. */
export const RECORDS_PER_IMPORT_PART = 1000;

const LOG_NAME = /^([0-9a-f]{64})\.log$/;
/** A log is compacted once it has grown by this much and by its own compacted size since the last time. */
const COMPACT_MIN_BYTES = 1024 * 1024;
/** Changes appended while a compaction ran are copied over without pausing once this few bytes are left. */
const FINAL_COPY_BYTES = 256 * 1024;
/** FSYNC=always: rounds of copying and fsyncing that tail while the event loop runs, before the last (synchronous) piece. */
const TAIL_SYNC_ROUNDS = 4;
/** A compaction gives up (and is tried again later) once its export holds this many bytes of rows changed before it reached them (a clear of a large session meanwhile). */
const COMPACTION_COPIES_MAX = 16 * 1024 * 1024;

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

/** One session's log file, as the journal knows it. */
interface LogFile {
  readonly path: string;
  readonly sessionId: string;
  /** What a rewrite from memory writes (after a failed fsync). */
  readonly session: Session;
  /** Bytes of whole records on disk: the next append goes here, a failed one is cut back to it. */
  size: number;
  /** Cutting a failed append back failed too: the file may end in a partial record until repaired. */
  fenced: boolean;
  /** The session left the store (expired, or dropped after a failed fsync): nothing more is written for it. */
  closed: boolean;
  /** lastAccessedAt last written, and when a touch was last tried (reads append one only now and then). */
  persistedAccess: number;
  touchTriedAt: number;
  /** The sequence of the last record written. */
  sequence: number;
  /** Bytes appended since the log was opened or compacted, and its size then. */
  appended: number;
  base: number;
  compacting: boolean;
  /** The compaction under way (settles, never rejects). */
  compaction: Promise<void> | null;
  /** Changes appended, and how many of them fdatasync has confirmed (FSYNC=always). */
  written: number;
  synced: number;
  syncing: Promise<void> | null;
  /** Bumped when a compaction renames a new file over the log. */
  generation: number;
  /** The directory fsync that makes the last rename durable. */
  renamed: Promise<void> | null;
  /**
   * An fsync of the log (or of the directory after its rename) failed: the page cache may hold
   * pages the disk never will, so nothing is appended or acknowledged until the log has been
   * rewritten from memory and fsynced (`rewriting`).
   */
  broken: boolean;
  rewriting: Promise<void> | null;
}

export interface JournalOptions {
  fsync?: FsyncMode;
  /** The file operations (tests inject faults here). */
  fs?: JournalFs;
  /** Longest step of a compaction or reopen between two turns of the event loop (Slices' default). */
  sliceMs?: number;
}

export class SessionJournal {
  private readonly files = new WeakMap<Session, LogFile>();
  private readonly io: JournalFs;
  readonly fsync: FsyncMode;
  private readonly sliceMs: number | undefined;
  /** Compactions under way (whenIdle waits for them). */
  private readonly jobs = new Set<Promise<void>>();
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
    this.checkDir();
    lockDir(this.io, dir);
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
    const file: LogFile = {
      path: this.pathOf(session.tokenHash), sessionId: session.id, session, size, sequence, fenced: false, closed: false,
      persistedAccess: session.lastAccessedAt, touchTriedAt: 0, appended: 0, base: size,
      compacting: false, written: 0, synced: 0, syncing: null, generation: 0, renamed: null,
      broken: false, rewriting: null, compaction: null,
    };
    this.files.set(session, file);
    return file;
  }

  /** Sessions on disk: token hash -> last recorded access (the file's mtime, see stamp()). */
  scan(): Map<string, number> {
    const found = new Map<string, number>();
    for (const name of this.io.readdirSync(this.dir)) {
      // A compaction that a crash interrupted: the log it was replacing is intact.
      if (name.endsWith('.log.tmp')) this.io.rmSync(join(this.dir, name));
      const match = LOG_NAME.exec(name);
      if (match) found.set(match[1], this.io.statSync(join(this.dir, name)).mtimeMs);
    }
    return found;
  }

  /** The same as scan(), with the event loop free between files (the server answers /readyz meanwhile). */
  async scanAsync(): Promise<Map<string, number>> {
    const found = new Map<string, number>();
    for (const name of await readdir(this.dir)) {
      if (name.endsWith('.log.tmp')) await rm(join(this.dir, name), { force: true });
      const match = LOG_NAME.exec(name);
      if (match) found.set(match[1], (await stat(join(this.dir, name))).mtimeMs);
    }
    return found;
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
    if (this.fsync === 'always') this.syncDir();
    this.track(session, bytes.length, 1);
    this.stamp(path, session.lastAccessedAt);
  }

  /** An add or add-many (`encoded` ahead by encodeUpsert: then only written). */
  upsert(session: Session, plan: UpsertPlan, at: number, encoded?: EncodedChange): void {
    const file = this.fileOf(session);
    if (encoded?.kind === 'upsert' && encodesPlan(encoded, plan)) this.appendEncoded(file, encoded);
    else this.appendBytes(file, at, [encodeRows({ t: 'upsert', ...planHead(plan, at) }, planRows(plan, 0, plan.records.length), file.sequence + 1)], true);
  }

  /** An import (one plan of any size) as parts that replay applies together, or not at all. */
  import(session: Session, plan: UpsertPlan, at: number, encoded?: EncodedChange): void {
    const file = this.fileOf(session);
    // One checked write: a failure cuts every part back off, so no later import follows a partial one.
    if (encoded?.kind === 'import' && encodesPlan(encoded, plan)) this.appendEncoded(file, encoded);
    else this.appendBytes(file, at, importParts(plan, at).map((part, i) => encodeRows(part.head, part.rows, file.sequence + 1 + i)), true);
  }

  /**
   * An add-many's log record, encoded as upsert() writes it, ahead of its
   * write turn; upsert() then only gives it its sequence and writes it, if
   * the index is still at the version the plan was made at.
   */
  async encodeUpsert(plan: UpsertPlan, at: number): Promise<EncodedChange> {
    return encodedChange('upsert', plan, at, [encodeRows({ t: 'upsert', ...planHead(plan, at) }, planRows(plan, 0, plan.records.length), 0)]);
  }

  /** An import's log records (its parts), encoded a part at a time with the event loop given back between them. */
  async encodeImport(plan: UpsertPlan, at: number): Promise<EncodedChange> {
    const slices = new Slices(this.sliceMs);
    const bytes: Buffer[] = [];
    for (const part of importParts(plan, at)) {
      bytes.push(encodeRows(part.head, part.rows, 0));
      await slices.pause();
    }
    return encodedChange('import', plan, at, bytes);
  }

  /** Write records encoded ahead: each given its sequence (its payload's checksum kept from encoding). */
  private appendEncoded(file: LogFile, encoded: EncodedChange): void {
    encoded.bytes.forEach((bytes, i) => {
      sealRecord(bytes, typeOf(bytes), file.sequence + 1 + i, encoded.payloadCrcs[i]);
    });
    this.appendBytes(file, encoded.at, encoded.bytes, true);
  }

  metadata(session: Session, id: string, metadata: Metadata, at: number): void {
    this.append(session, at, { t: 'metadata', at, id, metadata: utf8.encode(JSON.stringify(metadata)) });
  }

  delete(session: Session, ids: string[], at: number): void {
    this.append(session, at, { t: 'delete', at, ids });
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
    const file = this.files.get(session);
    if (this.fsync !== 'always' || !file || file.synced >= file.written) return undefined;
    return this.syncThrough(file, file.written);
  }

  private async syncThrough(file: LogFile, target: number): Promise<void> {
    while (file.synced < target) {
      if (file.closed) throw new Error('the session was closed before its changes were synced');
      // After a failed fsync, the changes are on stable storage once the rewrite from memory is (it rejects if that fails).
      if (file.broken) await this.rewrite(file);
      else {
        file.syncing ??= this.syncOnce(file).finally(() => (file.syncing = null));
        await file.syncing.catch((err) => {
          if (!file.broken) throw err;
        });
      }
    }
  }

  private async syncOnce(file: LogFile): Promise<void> {
    const upTo = file.written;
    const bytes = file.size;
    const generation = file.generation;
    try {
      await file.renamed;
      const fd = await this.io.open(file.path, 'r');
      try {
        await this.io.fdatasync(fd);
      } finally {
        await this.io.close(fd).catch(() => {});
      }
    } catch (err) {
      // A compaction renamed a new file (fsynced whole) over the log meanwhile: the old file's failure no longer matters.
      if (generation !== file.generation) return;
      if (!file.closed) {
        // fsyncgate: the kernel may have marked unwritten pages clean; the log no longer tells the truth.
        console.error(`tempvec: fsync failed for the log of session ${file.sessionId} (${describe(err)}); its changes are refused until it is rewritten from memory`);
        file.broken = true;
        void this.rewrite(file).catch(() => {});
      }
      throw err;
    }
    // A compaction renamed a new file over the log meanwhile: sync again, that one.
    if (generation !== file.generation) return;
    file.synced = Math.max(file.synced, upTo);
    // Say so in the log: a reopen then tells a damaged fsynced record from a power-loss tail (records.ts).
    // Best-effort: without it, damage before this point is cut rather than set aside.
    if (!file.closed && !file.fenced) {
      try {
        this.appendBytes(file, -Infinity, [encodeRecordV2({ t: 'synced', back: file.size - bytes }, file.sequence + 1)], false);
      } catch {
        // the next fdatasync writes another
      }
    }
  }

  /** The session leaves the store: nothing more is written for it (its file stays, see remove()). */
  close(session: Session): void {
    const file = this.files.get(session);
    if (file) file.closed = true;
  }

  /** Delete a session's log (it expired). Best-effort: a file left behind is an expired session the next start deletes. */
  remove(tokenHash: string, session?: Session): void {
    if (session) this.close(session);
    try {
      this.io.rmSync(this.pathOf(tokenHash));
    } catch (err) {
      console.error(`tempvec: could not delete the log of an expired session: ${describe(err)}`);
    }
  }

  /** Settles when no compaction is under way (tests, benches and shutdown). */
  /** Compact a session's log now (benches; otherwise a log is compacted as it grows). */
  async compactNow(session: Session): Promise<void> {
    const file = this.fileOf(session);
    if (!file.compacting) this.startCompaction(file);
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
  async restore(tokenHash: string, make: (sessionId: string, createdAt: number) => Session): Promise<{ session: Session; report: RestoreReport } | null> {
    const path = this.pathOf(tokenHash);
    const slices = new Slices(this.sliceMs);
    const fd = await this.io.open(path, 'r');
    let replayed: Awaited<ReturnType<typeof replay>>;
    try {
      const reader = new LogReader((out, position) => this.io.read(fd, out, 0, out.length, position), this.io.statSync(path).size, CHUNK_BYTES);
      replayed = await replay(reader, make, slices);
    } catch (err) {
      // No memory for it now: the log is sound and stays as it is for a later reopen.
      if (isWasmAllocationFailure(err)) throw err;
      if (err instanceof FormatError) {
        this.setAside(path, 'other-format');
        this.counts.otherFormat++;
        throw err;
      }
      if (err instanceof CorruptLogError || !isIoError(err)) {
        this.setAside(path, 'corrupt');
        this.counts.setAside++;
        throw err instanceof CorruptLogError ? err : new CorruptLogError(`cannot replay: ${(err as Error).message}`);
      }
      throw err;
    } finally {
      await this.io.close(fd).catch(() => {});
    }
    const { session, end, sequence } = replayed;
    if (!session) {
      this.io.rmSync(path);
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
    this.track(session, end.validBytes, sequence);
    return { session, report: { tornTail: end.tornTail, cutRecords: end.cutRecords } };
  }

  /** Cut a torn tail off (a failure throws: the session is not reopened on a log that could not be repaired). */
  private cut(path: string, size: number): void {
    const fd = this.io.openSync(path, 'r+');
    try {
      this.io.ftruncateSync(fd, size);
      if (this.fsync === 'always') this.io.fsyncSync(fd);
    } finally {
      closeQuietly(this.io, fd);
    }
  }

  private setAside(path: string, why: 'corrupt' | 'other-format'): void {
    quietly(() => this.io.renameSync(path, `${path}.${why}`));
  }

  /**
   * Append records (one change) at the end of the whole records. A failed
   * write (full disk, I/O error, short write) is cut back off, so the log
   * never holds a partial change that later records follow; if even that
   * fails the log is fenced: no write is accepted until the cut succeeds.
   */
  private append(session: Session, at: number, record: Exclude<RecordV2, { t: 'open' | 'synced' | 'upsert' | 'import' }>): void {
    const file = this.fileOf(session);
    this.appendBytes(file, at, [encodeRecordV2(record, file.sequence + 1)], record.t !== 'touch');
  }

  /** Append encoded records in one checked write (a failure cuts them all back off); `change`: not just a touch or a sync record. */
  private appendBytes(file: LogFile, at: number, records: Buffer[], change: boolean): void {
    const { io } = this;
    if (file.closed) throw new Error('the session\'s log is closed');
    if (file.broken) {
      void this.rewrite(file).catch(() => {});
      throw new Error('an fsync of the log failed: it is being rewritten from memory, changes are refused until that is on stable storage');
    }
    if (file.fenced) this.repair(file);
    const fd = io.openSync(file.path, 'r+');
    let bytes = 0;
    try {
      for (const record of records) {
        writeAllSync(io, fd, record, file.size + bytes);
        bytes += record.length;
      }
    } catch (err) {
      try {
        io.ftruncateSync(fd, file.size);
      } catch (undo) {
        file.fenced = true;
        console.error(`tempvec: session ${file.sessionId}: a failed append could not be cut back (${describe(undo)}); its changes are refused until it can`);
      }
      throw err;
    } finally {
      closeQuietly(io, fd);
    }
    file.size += bytes;
    file.appended += bytes;
    file.sequence += records.length;
    if (change) file.written++;
    // Every write moves the file's mtime: set it back to the last access (a sync record's `at` is -Infinity).
    file.persistedAccess = Math.max(at, file.persistedAccess);
    this.stamp(file.path, file.persistedAccess);
    if (!file.compacting && file.appended > Math.max(COMPACT_MIN_BYTES, file.base)) this.startCompaction(file);
  }


  /** Cut a fenced log back to its whole records (throws while that still fails). */
  private repair(file: LogFile): void {
    const fd = this.io.openSync(file.path, 'r+');
    try {
      this.io.ftruncateSync(fd, file.size);
    } finally {
      closeQuietly(this.io, fd);
    }
    file.fenced = false;
  }

  /** After a failed fsync: rewrite the log from memory (one attempt at a time; each call after a failure tries again). */
  private rewrite(file: LogFile): Promise<void> {
    if (!file.rewriting) {
      const job = this.rewriteFromMemory(file)
        .catch((err) => {
          quietly(() => this.io.rmSync(`${file.path}.tmp`));
          if (!file.closed) console.error(`tempvec: could not rewrite the log of session ${file.sessionId} from memory; its changes are still refused: ${describe(err)}`);
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

  /**
   * The session as it is in memory (snapshot.ts) to a temporary file, fsynced,
   * renamed over the log, the directory fsynced: then every change in memory
   * is on stable storage, and the log takes appends again. Writes are refused
   * meanwhile, so memory does not change under it.
   */
  private async rewriteFromMemory(file: LogFile): Promise<void> {
    const { io } = this;
    // A compaction under way writes the same temporary file; it gives up once it sees the log broken.
    while (file.compaction) await file.compaction;
    const slices = new Slices(this.sliceMs);
    const temp = `${file.path}.tmp`;
    const target = await io.open(temp, 'w', 0o600);
    let size = 0;
    try {
      for (const bytes of snapshotRecords(snapshotState(file), file.session.index.openExport())) {
        await writeAll(io, target, bytes, size);
        size += bytes.length;
        if (file.closed) throw new Error('the session closed during the rewrite');
        await slices.pause();
      }
      await io.fsync(target);
    } finally {
      await io.close(target).catch(() => {});
    }
    if (file.closed) throw new Error('the session closed during the rewrite');
    io.renameSync(temp, file.path);
    file.generation++;
    file.fenced = false;
    file.size = file.base = size;
    file.appended = 0;
    file.renamed = null;
    await this.syncDirAsync();
    file.broken = false;
    file.synced = file.written;
  }

  private startCompaction(file: LogFile): void {
    file.compacting = true;
    const job = this.compact(file)
      .catch((err) => {
        quietly(() => this.io.rmSync(`${file.path}.tmp`));
        // Tried again once the log has grown by as much again.
        file.base = file.size;
        file.appended = 0;
        if (!file.closed) console.error(`tempvec: could not compact the log of session ${file.sessionId}; the old log is kept: ${describe(err)}`);
      })
      .finally(() => {
        file.compacting = false;
        file.compaction = null;
        this.jobs.delete(job);
      });
    file.compaction = job;
    this.jobs.add(job);
  }

  /**
   * Rewrite a log as the session is in memory (snapshot.ts), in slices that
   * give the event loop back: on a later turn (so the change whose append
   * started this is applied), open an export of the index and note the log's
   * size at the same moment; write the snapshot to a temporary file (every
   * write checked), fsync it and read it back against the checksum of what
   * was written; then copy over what was appended to the log since that
   * moment and rename the file over the log. Any failure leaves the old log
   * as it was. Amortised: a log is rewritten only after it has grown by its
   * own compacted size.
   */
  private async compact(file: LogFile): Promise<void> {
    const { io } = this;
    await nextTurn();
    if (file.closed || file.broken) return;
    const slices = new Slices(this.sliceMs);
    const generation = file.generation;
    const source = await io.open(file.path, 'r');
    const temp = `${file.path}.tmp`;
    let target: number | undefined;
    try {
      target = await io.open(temp, 'w+', 0o600);
      // The snapshot's moment: the log up to `snapshot` bytes holds what the export holds.
      const snapshot = file.size;
      let copies = 0;
      const rows = file.session.index.openExport((bytes) => (copies += bytes));
      let size = 0;
      let checksum = 0;
      for (const bytes of snapshotRecords(snapshotState(file), rows)) {
        if (copies > COMPACTION_COPIES_MAX) throw new Error('the session changed too much under the compaction (its export kept too many copies)');
        await writeAll(io, target, bytes, size);
        checksum = crc32(bytes, checksum);
        size += bytes.length;
        await slices.pause();
      }
      // Changes appended meanwhile, copied while there are many.
      let copied = snapshot;
      while (file.size - copied > FINAL_COPY_BYTES) {
        const piece = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, file.size - copied));
        await readExact(io, source, piece, copied);
        await writeAll(io, target, piece, size);
        checksum = crc32(piece, checksum);
        size += piece.length;
        copied += piece.length;
        await slices.pause();
      }
      await io.fsync(target);
      await this.verify(target, size, checksum, slices);
      if (this.fsync === 'always') {
        // Changes an fdatasync of the old log acknowledged meanwhile must be on stable storage in
        // the new file before it replaces the old one: copy and fsync them while the event loop runs.
        for (let round = 0; round < TAIL_SYNC_ROUNDS && file.size > copied; round++) {
          const piece = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, file.size - copied));
          await readExact(io, source, piece, copied);
          await writeAll(io, target, piece, size);
          size += piece.length;
          copied += piece.length;
          await io.fsync(target);
        }
      }
      if (file.closed) throw new Error('the session closed during compaction');
      if (file.broken || file.generation !== generation) throw new Error('an fsync failed during compaction: the log is rewritten from memory instead');
      // From here on synchronous: no append can come in between.
      const rest = file.size - copied;
      if (rest > 0) {
        const piece = readExactSync(io, source, rest, copied);
        writeAllSync(io, target, piece, size);
        if (!readExactSync(io, target, rest, size).equals(piece)) throw new Error('the copied tail reads back different');
        size += rest;
        // FSYNC=always: the last few changes, which may be acknowledged already, synced before the rename (on the event loop, but small).
        if (this.fsync === 'always') io.fsyncSync(target);
      }
      io.closeSync(target);
      target = undefined;
      io.renameSync(temp, file.path);
      file.generation++; // an fdatasync of the old file no longer counts
      file.fenced = false; // the new file ends at its last whole record
      file.size = size;
      file.base = size - rest;
      file.appended = rest;
      // The rename is durable once the directory is fsynced; fdatasyncs of the new file wait for it.
      const renamed = this.syncDirAsync();
      file.renamed = this.fsync === 'always' ? renamed : renamed.catch(() => {});
      await renamed.catch((err) => console.error(`tempvec: could not fsync ${this.dir} after compacting a log: ${describe(err)}`));
    } finally {
      if (target !== undefined) closeQuietly(io, target);
      await io.close(source).catch(() => {});
    }
  }

  /** Read a written file back: exactly `size` bytes, with the checksum of what was written. */
  private async verify(fd: number, size: number, checksum: number, slices: Slices): Promise<void> {
    let seen = 0;
    const piece = Buffer.allocUnsafe(Math.min(CHUNK_BYTES, size));
    for (let at = 0; at < size; at += piece.length) {
      const part = piece.subarray(0, Math.min(piece.length, size - at));
      await readExact(this.io, fd, part, at);
      seen = crc32(part, seen);
      await slices.pause();
    }
    const extra = await this.io.read(fd, Buffer.allocUnsafe(1), 0, 1, size);
    if (seen !== checksum || extra !== 0) throw new Error('the compacted log reads back different from what was written');
  }

  private async syncDirAsync(): Promise<void> {
    const fd = await this.io.open(this.dir, 'r');
    try {
      await this.io.fsync(fd);
    } finally {
      await this.io.close(fd).catch(() => {});
    }
  }

  private syncDir(): void {
    const fd = this.io.openSync(this.dir, 'r');
    try {
      this.io.fsyncSync(fd);
    } finally {
      closeQuietly(this.io, fd);
    }
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
  private stamp(path: string, at: number): void {
    quietly(() => this.io.utimesSync(path, at / 1000, at / 1000));
  }
}

function closeQuietly(io: JournalFs, fd: number): void {
  quietly(() => io.closeSync(fd));
}

function quietly(fn: () => void): void {
  try {
    fn();
  } catch {
    // best-effort: the caller has already decided what a failure means
  }
}

function describe(err: unknown): string {
  const { code, message } = err as { code?: string; message?: string };
  return code ?? message ?? String(err);
}

/** An I/O error (the log is unreadable for now and stays on disk), not a log that cannot be replayed. */
function isIoError(err: unknown): boolean {
  const { code } = err as { code?: unknown };
  return typeof code === 'string' && /^E[A-Z0-9]+$/.test(code);
}

/** What a snapshot of the session records besides its rows, now. */
function snapshotState(file: LogFile) {
  const { session } = file;
  return { sessionId: session.id, createdAt: session.createdAt, updatedAt: session.updatedAt, lastAccessedAt: session.lastAccessedAt, sequence: file.sequence };
}

const utf8 = new TextEncoder();

/**
 * A change's log records, encoded ahead of the write turn that applies it,
 * for the plan made at index `version` from `records`: written only if the
 * plan of the turn is made at the same version from the same records (then
 * it is the same plan).
 */
export interface EncodedChange {
  kind: 'upsert' | 'import';
  at: number;
  version: number;
  records: readonly VectorInput[];
  /** The records, sealed again with their sequences when written; each payload's CRC-32 kept for that. */
  bytes: Buffer[];
  payloadCrcs: number[];
}

function encodedChange(kind: EncodedChange['kind'], plan: UpsertPlan, at: number, bytes: Buffer[]): EncodedChange {
  return { kind, at, version: plan.version, records: plan.records, bytes, payloadCrcs: bytes.map((b) => crc32(b.subarray(RECORD_HEADER_BYTES))) };
}

function encodesPlan(encoded: EncodedChange, plan: UpsertPlan): boolean {
  return encoded.version === plan.version && encoded.records === plan.records;
}

function planHead(plan: UpsertPlan, at: number): RowsHead {
  return { at, dimensions: plan.dimensions, metric: plan.metric, vectorType: plan.vectorType };
}

/** Rows [from, to) of a plan, as encodeRows reads them (metadata as the JSON text the index stores). */
function planRows(plan: UpsertPlan, from: number, to: number): RowSource {
  return {
    count: to - from,
    id: (i) => plan.records[from + i].id,
    vector: (i) => plan.vectors[from + i],
    metadata: (i) => plan.metadataJson[from + i]?.text ?? null,
  };
}

/** An import's parts of RECORDS_PER_IMPORT_PART rows: each one's head and rows. */
function importParts(plan: UpsertPlan, at: number) {
  const parts = Math.max(1, Math.ceil(plan.records.length / RECORDS_PER_IMPORT_PART));
  return Array.from({ length: parts }, (_, part) => {
    const from = part * RECORDS_PER_IMPORT_PART;
    return {
      head: { t: 'import' as const, part, parts, ...planHead(plan, at) },
      rows: planRows(plan, from, Math.min(plan.records.length, from + RECORDS_PER_IMPORT_PART)),
    };
  });
}
