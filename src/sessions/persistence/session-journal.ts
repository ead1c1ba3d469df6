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
import { crc32 } from 'node:zlib';
import { ConfigError, type FsyncMode, type Metric, type VectorType } from '../../config.js';
import type { Metadata, UpsertPlan } from '../../index/vector-index.js';
import { isWasmAllocationFailure } from '../../limits/wasm-memories.js';
import type { Session } from '../session.js';
import { compactEntries, rowsPerStep } from './compact.js';
import { lockDir } from './dir-lock.js';
import { nodeFs, readExact, readExactSync, writeAll, writeAllSync, type JournalFs } from './journal-fs.js';
import { base64ToFloat32, CorruptLogError, encodeRecord, float32ToBase64, HEADER_BYTES, walkLog } from './records.js';
import { Slices } from './slices.js';
import { snapshotEntries } from './snapshot.js';

export type LogEntry =
  | { t: 'open'; v: 1; sessionId: string; createdAt: number }
  | { t: 'upsert'; at: number; dimensions: number; metric: Metric; vectorType?: VectorType; records: LogRecord[] }
  /** One part of an import: replayed only once all `parts` are on disk, so an import is all or nothing after a crash too. */
  | { t: 'import'; at: number; part: number; parts: number; dimensions: number; metric: Metric; vectorType?: VectorType; records: LogRecord[] }
  | { t: 'metadata'; at: number; id: string; metadata: Metadata }
  | { t: 'delete'; at: number; ids: string[] }
  | { t: 'clear'; at: number }
  | { t: 'reset'; at: number }
  | { t: 'touch'; at: number }
  /** FSYNC=always, after each fdatasync: the log up to `back` bytes before this record is on stable storage (records.ts). */
  | { t: 'synced'; back: number };
export interface LogRecord { id: string; v: string; m?: Metadata }
export type ChangeEntry = Exclude<LogEntry, { t: 'open' | 'synced' }>;

/** Records per import part: keeps each part far below the framing's size cap, however large the import. */
export const RECORDS_PER_IMPORT_PART = 1000;

const LOG_NAME = /^([0-9a-f]{64})\.log$/;
/** A log is compacted once it has grown by this much and by its own compacted size since the last time. */
const COMPACT_MIN_BYTES = 1024 * 1024;
/** Files are read and copied in pieces this large, the event loop given back between them. */
const CHUNK_BYTES = 4 * 1024 * 1024;
/** A float32 component takes 16/3 bytes of base64 in a log record: a log of N bytes holds at most N / (16/3 x dimensions) rows. */
const BASE64_BYTES_PER_COMPONENT = 16 / 3;
/** Changes appended while a compaction ran are copied over without pausing once this few bytes are left. */
const FINAL_COPY_BYTES = 256 * 1024;
/** FSYNC=always: rounds of copying and fsyncing that tail while the event loop runs, before the last (synchronous) piece. */
const TAIL_SYNC_ROUNDS = 4;

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
  readonly counts: JournalCounts = { tailsCut: 0, recordsCut: 0, setAside: 0 };

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

  private track(session: Session, size: number): LogFile {
    const file: LogFile = {
      path: this.pathOf(session.tokenHash), sessionId: session.id, session, size, fenced: false, closed: false,
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

  /** A new session's log, holding its open record (fsynced with the directory under FSYNC=always). */
  create(session: Session): void {
    const { io } = this;
    const path = this.pathOf(session.tokenHash);
    const bytes = encodeRecord({ t: 'open', v: 1, sessionId: session.id, createdAt: session.createdAt } satisfies LogEntry);
    const fd = io.openSync(path, 'wx', 0o600);
    try {
      writeAllSync(io, fd, bytes, 0);
      if (this.fsync === 'always') io.fsyncSync(fd);
    } catch (err) {
      closeQuietly(io, fd);
      quietly(() => io.rmSync(path)); // left behind, it holds no whole record and is dropped on reopen
      throw err;
    }
    closeQuietly(io, fd);
    if (this.fsync === 'always') this.syncDir();
    this.track(session, bytes.length);
    this.stamp(path, session.lastAccessedAt);
  }

  /** An add or add-many (`encoded` ahead by encodeUpsert: then only written). */
  upsert(session: Session, plan: UpsertPlan, at: number, encoded?: EncodedChange): void {
    if (encoded?.kind === 'upsert' && encodesPlan(encoded, plan)) this.appendBytes(this.fileOf(session), encoded.at, encoded.bytes, true);
    else this.append(session, at, { ...upsertHead(plan, at), records: logRecords(plan, 0, plan.records.length) });
  }

  /** An import (one plan of any size) as parts that replay applies together, or not at all. */
  import(session: Session, plan: UpsertPlan, at: number, encoded?: EncodedChange): void {
    // One checked write: a failure cuts every part back off, so no later import follows a partial one.
    if (encoded?.kind === 'import' && encodesPlan(encoded, plan)) this.appendBytes(this.fileOf(session), encoded.at, encoded.bytes, true);
    else this.append(session, at, ...importParts(plan, at).map(({ head, from, to }) => ({ ...head, records: logRecords(plan, from, to) }) as ChangeEntry));
  }

  /**
   * An add-many's log record, encoded as upsert() writes it, in slices that
   * give the event loop a turn between pieces; upsert() then only writes it.
   * `at` is when it was encoded, a few milliseconds before it is applied.
   */
  async encodeUpsert(plan: UpsertPlan, at: number): Promise<EncodedChange> {
    const bytes = await encodeInSlices(upsertHead(plan, at), plan, 0, plan.records.length, new Slices(this.sliceMs));
    return encodedChange('upsert', plan, at, bytes);
  }

  /** An import's log records (its parts), encoded in slices as encodeUpsert does. */
  async encodeImport(plan: UpsertPlan, at: number): Promise<EncodedChange> {
    const slices = new Slices(this.sliceMs);
    const bytes: Buffer[] = [];
    for (const { head, from, to } of importParts(plan, at)) bytes.push(...await encodeInSlices(head, plan, from, to, slices));
    return encodedChange('import', plan, at, bytes);
  }


  metadata(session: Session, id: string, metadata: Metadata, at: number): void {
    this.append(session, at, { t: 'metadata', at, id, metadata });
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
        this.appendBytes(file, -Infinity, [encodeRecord({ t: 'synced', back: file.size - bytes } satisfies LogEntry)], false);
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
   * Rebuild a session from its log, in slices that give the event loop back
   * between records. A torn or damaged tail is cut off the file and reported
   * (point-in-time recovery); a damaged record that was on stable storage
   * (records.ts) moves the file aside (`.corrupt`) and throws CorruptLogError,
   * touching no other session. A log with no whole record (a session whose
   * creation failed, so never acknowledged) is deleted: null.
   */
  async restore(tokenHash: string, make: (sessionId: string, createdAt: number) => Session): Promise<{ session: Session; report: RestoreReport } | null> {
    const path = this.pathOf(tokenHash);
    const slices = new Slices(this.sliceMs);
    const fd = await this.io.open(path, 'r');
    let bytes: Buffer;
    try {
      bytes = await this.readSliced(fd, this.io.statSync(path).size, slices);
    } finally {
      await this.io.close(fd).catch(() => {});
    }
    let session: Session | undefined;
    let end: { validBytes: number; tornTail: string | null; cutRecords: number };
    const imported = new ImportParts();
    /** Where the import whose parts are being collected starts. */
    let importStart = 0;
    let reserved = false;
    try {
      const walk = walkLog(bytes);
      for (let step = walk.next(), at = 0; ; at = step.value.end, step = walk.next()) {
        if (step.done) {
          end = step.value;
          break;
        }
        const entry = step.value.payload as LogEntry;
        if (entry.t === 'import' && !imported.pending) importStart = at;
        if (session) await applyEntry(session, entry, imported, slices);
        else session = openSession(entry, make);
        if (!reserved && session.index.initialized) {
          // Room for every row the log can hold, at once: growing step by step would copy the stored rows each time.
          session.index.reserve(Math.ceil(bytes.length / (BASE64_BYTES_PER_COMPONENT * session.index.getConfig().dimensions!)));
          reserved = true;
        }
        await slices.pause();
      }
    } catch (err) {
      session?.index.reset();
      // No memory for it now: the log is sound and stays as it is for a later reopen.
      if (isWasmAllocationFailure(err)) throw err;
      this.setAside(path);
      this.counts.setAside++;
      throw err instanceof CorruptLogError ? err : new CorruptLogError(`cannot replay: ${(err as Error).message}`);
    }
    if (!session) {
      this.io.rmSync(path);
      return null;
    }
    if (imported.pending) {
      // A crash in the middle of writing an import: its parts were never acknowledged.
      end = { validBytes: importStart, tornTail: `an import cut short at byte ${importStart} (${bytes.length - importStart} bytes cut)`, cutRecords: end.cutRecords };
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
    this.track(session, end.validBytes);
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

  private setAside(path: string): void {
    quietly(() => this.io.renameSync(path, `${path}.corrupt`));
  }

  /**
   * Append records (one change) at the end of the whole records. A failed
   * write (full disk, I/O error, short write) is cut back off, so the log
   * never holds a partial change that later records follow; if even that
   * fails the log is fenced: no write is accepted until the cut succeeds.
   */
  private append(session: Session, at: number, ...entries: ChangeEntry[]): void {
    const bytes = entries.length === 1 ? encodeRecord(entries[0]) : Buffer.concat(entries.map(encodeRecord));
    this.appendBytes(this.fileOf(session), at, [bytes], entries.some((entry) => entry.t !== 'touch'));
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
      for (const entry of snapshotEntries(file.session)) {
        const bytes = encodeRecord(entry);
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
   * Rewrite a log as its compacted form, in slices that give the event loop
   * back: read and compact the log as it was, write it to a temporary file
   * (every write checked), fsync it and read it back against the checksum of
   * what was written; then copy over what was appended meanwhile and rename
   * the file over the log. Any failure leaves the old log as it was.
   * Amortised: a log is rewritten only after it has grown by its own
   * compacted size.
   */
  private async compact(file: LogFile): Promise<void> {
    const { io } = this;
    const slices = new Slices(this.sliceMs);
    const snapshot = file.size;
    const generation = file.generation;
    const source = await io.open(file.path, 'r');
    const temp = `${file.path}.tmp`;
    let target: number | undefined;
    try {
      const entries = await this.readEntries(source, snapshot, slices);
      const compacted = compactEntries(entries);
      await slices.pause();
      target = await io.open(temp, 'w+', 0o600);
      let size = 0;
      let checksum = 0;
      for (const entry of compacted) {
        const bytes = encodeRecord(entry);
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
          const piece = Buffer.allocUnsafe(file.size - copied);
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

  /** The entries of the first `size` bytes of a log, read and decoded in slices. */
  private async readEntries(fd: number, size: number, slices: Slices): Promise<LogEntry[]> {
    const bytes = await this.readSliced(fd, size, slices);
    const entries: LogEntry[] = [];
    const walk = walkLog(bytes);
    for (let step = walk.next(); ; step = walk.next()) {
      if (step.done) {
        if (step.value.validBytes !== size) throw new Error(`the log does not end in a whole record (${step.value.tornTail})`);
        return entries;
      }
      entries.push(step.value.payload as LogEntry);
      await slices.pause();
    }
  }

  private async readSliced(fd: number, size: number, slices: Slices): Promise<Buffer> {
    const bytes = Buffer.allocUnsafe(size);
    for (let at = 0; at < size; at += CHUNK_BYTES) {
      await readExact(this.io, fd, bytes.subarray(at, Math.min(size, at + CHUNK_BYTES)), at);
      await slices.pause();
    }
    return bytes;
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

/** The session a log's first record opens. */
function openSession(open: LogEntry | undefined, make: (sessionId: string, createdAt: number) => Session): Session {
  if (!open || open.t !== 'open' || open.v !== 1) throw new CorruptLogError('the log does not start with an open record');
  return make(open.sessionId, open.createdAt);
}

function upsertRecords(session: Session, records: LogRecord[], entry: Extract<LogEntry, { t: 'upsert' | 'import' }>): void {
  session.index.upsert(
    records.map((r) => ({ id: r.id, vector: base64ToFloat32(r.v), metadata: r.m })),
    { dimensions: entry.dimensions, metric: entry.metric, vectorType: entry.vectorType },
  );
}

/**
 * Apply one entry of a log to the session it rebuilds (the only replay:
 * restore's). An upsert or import goes a few rows at a time, pausing in
 * between; the parts of an import are collected in `imported` and applied
 * with the last one.
 */
async function applyEntry(session: Session, entry: LogEntry, imported: ImportParts, slices: Slices): Promise<void> {
  const { index } = session;
  switch (entry.t) {
    case 'upsert':
    case 'import': {
      const records = entry.t === 'import' ? imported.add(entry) : entry.records;
      if (!records) return; // more parts to come (or a crash cut them off: then never applied)
      const step = rowsPerStep(entry.dimensions);
      for (let i = 0; i < records.length; i += step) {
        upsertRecords(session, records.slice(i, i + step), entry);
        await slices.pause();
      }
      break;
    }
    case 'metadata':
      index.setMetadata(entry.id, entry.metadata);
      break;
    case 'delete':
      index.delete(entry.ids);
      break;
    case 'clear':
      index.clear();
      break;
    case 'reset':
      index.reset();
      break;
    case 'touch':
      break;
    case 'synced':
      return;
    default:
      throw new CorruptLogError(`unknown record type ${(entry as { t: unknown }).t}`);
  }
  if (entry.t !== 'touch') session.markUpdated(entry.at);
  session.touch(Math.max(session.lastAccessedAt, entry.at));
}

/** Collects the parts of an import; add() returns all its records once the last part arrives. */
export class ImportParts {
  private records: LogRecord[] = [];
  private expected = 0;

  /** An import has some of its parts, not all. */
  get pending(): boolean {
    return this.expected > 0;
  }

  add(entry: Extract<LogEntry, { t: 'import' }>): LogRecord[] | null {
    if (entry.part !== this.expected) throw new CorruptLogError(`import part ${entry.part} follows part ${this.expected - 1}`);
    for (const record of entry.records) this.records.push(record);
    if (entry.part + 1 < entry.parts) {
      this.expected++;
      return null;
    }
    const all = this.records;
    this.records = [];
    this.expected = 0;
    return all;
  }
}

/** An import's log records, encoded ahead of the step that applies it (SessionJournal.encodeImport), and what they describe. */
/** A change's log records, encoded ahead of the step that applies it, and the plan they describe. */
export interface EncodedChange {
  kind: 'upsert' | 'import';
  at: number;
  dimensions: number;
  metric: Metric;
  vectorType: VectorType | undefined;
  ids: string[];
  vectors: Float32Array[];
  metadata: unknown[];
  /** The records' bytes, in order (each record's header, then its payload in pieces). */
  bytes: Buffer[];
}

function encodedChange(kind: EncodedChange['kind'], plan: UpsertPlan, at: number, bytes: Buffer[]): EncodedChange {
  const { records } = plan;
  return { kind, at, dimensions: plan.dimensions, metric: plan.metric, vectorType: plan.vectorType, ids: records.map((r) => r.id), vectors: plan.vectors, metadata: records.map((r) => r.metadata), bytes };
}

/** The fields of an upsert record before its records, in the order encodeRecord writes them. */
function upsertHead(plan: UpsertPlan, at: number) {
  return { t: 'upsert' as const, at, dimensions: plan.dimensions, metric: plan.metric, vectorType: plan.vectorType };
}

/** The log records of plan rows [from, to). */
function logRecords(plan: UpsertPlan, from: number, to: number): LogRecord[] {
  const records: LogRecord[] = [];
  for (let i = from; i < to; i++) records.push({ id: plan.records[i].id, v: float32ToBase64(plan.vectors[i]), m: plan.records[i].metadata });
  return records;
}

/** An import's parts of RECORDS_PER_IMPORT_PART: each one's fields before its records, and its rows. */
function importParts(plan: UpsertPlan, at: number) {
  const parts = Math.max(1, Math.ceil(plan.records.length / RECORDS_PER_IMPORT_PART));
  return Array.from({ length: parts }, (_, part) => ({
    head: { t: 'import' as const, at, part, parts, dimensions: plan.dimensions, metric: plan.metric, vectorType: plan.vectorType },
    from: part * RECORDS_PER_IMPORT_PART,
    to: Math.min(plan.records.length, (part + 1) * RECORDS_PER_IMPORT_PART),
  }));
}

/** Vector components per piece of a record encoded in slices. */
const PIECE_FLOATS = 64 * 1024;

/**
 * The bytes of encodeRecord({ ...head, records: logRecords(plan, from, to) }),
 * made a piece of rows at a time with a pause between pieces: the header,
 * then the payload's text in pieces (its checksum carried from piece to piece).
 */
async function encodeInSlices(head: object, plan: UpsertPlan, from: number, to: number, slices: Slices): Promise<Buffer[]> {
  // JSON.stringify of the head with empty records ends in `[]}`: the records go between.
  const open = JSON.stringify({ ...head, records: [] });
  const pieces = [Buffer.from(open.slice(0, -2), 'utf8')];
  const step = Math.max(1, Math.floor(PIECE_FLOATS / plan.dimensions));
  for (let i = from; i < to; i += step) {
    const text = JSON.stringify(logRecords(plan, i, Math.min(to, i + step)));
    pieces.push(Buffer.from((i > from ? ',' : '') + text.slice(1, -1), 'utf8'));
    await slices.pause();
  }
  pieces.push(Buffer.from(']}', 'utf8'));
  let checksum = 0;
  let length = 0;
  for (const piece of pieces) {
    checksum = crc32(piece, checksum);
    length += piece.length;
  }
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32LE(length, 0);
  header.writeUInt32LE(checksum, 4);
  return [header, ...pieces];
}

/** Whether `encoded` holds exactly the records `plan` applies (a plan prepared again after other changes may differ). */
function encodesPlan(encoded: EncodedChange, plan: UpsertPlan): boolean {
  const { records, vectors } = plan;
  if (encoded.dimensions !== plan.dimensions || encoded.metric !== plan.metric || encoded.vectorType !== plan.vectorType || encoded.ids.length !== records.length) return false;
  for (let i = 0; i < records.length; i++) {
    if (encoded.ids[i] !== records[i].id || encoded.vectors[i] !== vectors[i] || encoded.metadata[i] !== records[i].metadata) return false;
  }
  return true;
}
