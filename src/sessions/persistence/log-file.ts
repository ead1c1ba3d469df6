// One session's log file: appends at the end of its whole records (a failed
// one cut back off, or the file fenced until it can be; a large one written
// in pieces off the event loop), and FSYNC=always's group commit (every
// change appended while one fdatasync runs shares the next). After a failed
// fsync the file is "broken": nothing is appended or acknowledged until the
// host has rewritten it from memory (compaction.ts), since the page cache
// may hold pages the disk never will. The file owns its state: the journal
// and compaction.ts read it and change it only through the methods below.
import type { FsyncMode } from '../../config.js';
import type { Session } from '../session.js';
import { closeQuietly, describe, SyncNotTriedError, writeAll, writeAllSync, type JournalFs } from './journal-fs.js';
import { encodeRecordV2 } from './records-v2.js';

/** A log is compacted once it has grown by this much and by its own compacted size since the last time. */
const COMPACT_MIN_BYTES = 1024 * 1024;
/** A failed compaction is tried again after this pause, doubled with each failure in a row up to COMPACT_RETRY_MAX_MS. */
const COMPACT_RETRY_MS = 1000;
const COMPACT_RETRY_MAX_MS = 60_000;

/** What a log file asks of the journal that holds it. */
export interface LogHost {
  readonly io: JournalFs;
  readonly fsync: FsyncMode;
  /** The log has grown by its own compacted size: compact it (in the background). */
  compactionDue(file: LogFile): void;
  /** After a failed fsync: rewrite the log from memory (settles once that is on stable storage; the file runs one at a time). */
  rewrite(file: LogFile): Promise<void>;
  /** Set the file's mtime to its session's last recorded access. */
  stamp(path: string, at: number): void;
  /** The file was opened, or used while open: the host closes the least recently used past its cap. */
  used(file: LogFile): void;
  /** The file's size changed (the host counts DATA_DIR's bytes). */
  resized(file: LogFile): void;
  /** The store's clock (a failed compaction's pause). */
  now(): number;
  /** fsync DATA_DIR (after a rename whose directory fsync could not be tried). */
  syncDir(): Promise<void>;
}

export { SyncNotTriedError } from './journal-fs.js';

/**
 * `open`: appends go at its end; `fenced`: a failed append could not be cut back (cut before the
 * next); `broken`: an fsync failed, nothing is appended or acknowledged until it is rewritten from
 * memory; `closed`: its session left the store. Closed outranks broken, and broken fenced.
 */
export type LogState = 'open' | 'fenced' | 'broken' | 'closed';

export class LogFile {
  readonly sessionId: string;
  // The state, changed by the transitions fence(), unfence(), break(), rewritten() and close().
  private state: LogState = 'open';

  // Where the log ends: changed by landed() and replaced() only.
  /** Bytes of whole records on disk: the next append goes here, a failed one is cut back to it. */
  private wholeBytes: number;
  /** The sequence of the last record written. */
  private lastSequence: number;
  /** Bumped when a compaction or a rewrite renames a new file over the log. */
  private renames = 0;

  // When it is due a compaction.
  /** Bytes appended since the log was opened or compacted, and its size then. */
  private grown = 0;
  private base: number;
  /** The compaction under way (settles, never rejects). */
  private compactionJob: Promise<void> | null = null;
  /** After a compaction failed: not tried again before this time (the host's clock), and failures in a row. */
  private compactAfter = 0;
  private compactFailures = 0;

  // Group commit (FSYNC=always) and the rewrite after a failed fsync.
  /** Changes appended, and how many of them fdatasync has confirmed. */
  private written = 0;
  private synced = 0;
  private syncing: Promise<void> | null = null;
  /** The directory fsync that makes the last rename durable. */
  private renamed: Promise<void> | null = null;
  /** That fsync could not be tried (the directory could not be opened): the next sync tries it first. */
  private renameUnsynced = false;
  /** The rewrite from memory under way (state `broken`). */
  private rewriting: Promise<void> | null = null;

  // Appends, and the file they go to.
  /**
   * An append in pieces under way (settles, never rejects): until it ends no
   * other change is appended (the session's write turn holds it), a touch or
   * sync record is skipped, and a compaction or rewrite waits before it
   * renames a new file over the log.
   */
  private inPieces: Promise<void> | null = null;
  /** A compaction's end: appends in pieces wait until it settles before they start. */
  private appendsHeld: Promise<void> | null = null;
  /** The log, open for appends (null until the first, and after a rename over it or close()). */
  private fd: number | null = null;
  /** release() came while an append in pieces used the file: it closes once that ends. */
  private releaseAfterAppend = false;

  // Reads recorded.
  /** lastAccessedAt last written, and when a touch was last tried (reads append one only now and then). */
  private recordedAccess: number;
  private touchTriedAt = 0;

  constructor(
    private readonly host: LogHost,
    readonly path: string,
    /** What a compaction or a rewrite from memory writes. */
    readonly session: Session,
    size: number,
    sequence: number,
  ) {
    this.sessionId = session.id;
    this.recordedAccess = session.lastAccessedAt;
    this.wholeBytes = size;
    this.lastSequence = sequence;
    this.base = size;
  }

  /** Bytes of whole records on disk. */
  get size(): number {
    return this.wholeBytes;
  }

  /** The sequence of the last record written (the next is one more). */
  get sequence(): number {
    return this.lastSequence;
  }

  /** Bumped by every rename over the log: a step that started on another generation no longer applies. */
  get generation(): number {
    return this.renames;
  }

  /** Bytes appended since the log was opened or compacted. */
  get appended(): number {
    return this.grown;
  }

  get closed(): boolean {
    return this.state === 'closed';
  }

  get broken(): boolean {
    return this.state === 'broken';
  }

  /** The append in pieces under way, if any (settles, never rejects). */
  get appending(): Promise<void> | null {
    return this.inPieces;
  }

  /** The compaction under way, if any (settles, never rejects). */
  get compaction(): Promise<void> | null {
    return this.compactionJob;
  }

  get compacting(): boolean {
    return this.compactionJob !== null;
  }

  /** lastAccessedAt as the log last recorded it. */
  get persistedAccess(): number {
    return this.recordedAccess;
  }

  /**
   * Append records (one change, or a touch or sync record: `change` false)
   * in one checked write at the end of the whole records. A failed write
   * (full disk, I/O error, short write) is cut back off, so the log never
   * holds a partial change that later records follow; if even that fails
   * the log is fenced: no write is accepted until the cut succeeds.
   */
  append(at: number, records: Buffer[], change: boolean): void {
    const { io } = this.host;
    if (!this.writable(change)) return;
    const fd = this.open();
    let bytes = 0;
    try {
      for (const record of records) {
        writeAllSync(io, fd, record, this.wholeBytes + bytes);
        bytes += record.length;
      }
    } catch (err) {
      this.cutBack(fd);
      throw err;
    }
    this.landed(at, bytes, records.length, change);
  }

  /**
   * append() for a change too large for one write on the event loop: its
   * records go out in pieces of at most `pieceBytes`, each an asynchronous
   * write, the session's write turn held meanwhile. A failure, or a log
   * broken or closed before the last piece, cuts every piece back off, so no
   * later record follows a partial change; the change is refused.
   */
  async appendInPieces(at: number, records: Buffer[], change: boolean, pieceBytes: number): Promise<void> {
    const { io } = this.host;
    while (this.appendsHeld) await this.appendsHeld;
    if (!this.writable(change)) return;
    const fd = this.open();
    const generation = this.renames;
    let bytes = 0;
    const pieces = (async () => {
      for (const record of records) {
        for (let from = 0; from < record.length; from += pieceBytes) {
          const piece = record.subarray(from, Math.min(record.length, from + pieceBytes));
          await writeAll(io, fd, piece, this.wholeBytes + bytes);
          bytes += piece.length;
          if (this.closed || this.broken) throw new Error("the session's log was closed, or an fsync of it failed, while a change was written to it");
        }
      }
      if (this.renames !== generation) throw new Error('a new log was renamed over the one a change was written to'); // a bug: compaction and rewrite wait
    })();
    this.inPieces = pieces.catch(() => {});
    try {
      await pieces;
    } catch (err) {
      if (this.renames === generation) this.cutBack(fd);
      throw err;
    } finally {
      this.inPieces = null;
      if (this.releaseAfterAppend) this.release();
    }
    this.landed(at, bytes, records.length, change);
  }

  /** Make appends in pieces wait until the returned function is called (a compaction's last copy and rename). */
  holdAppendsInPieces(): () => void {
    let resume!: () => void;
    this.appendsHeld = new Promise<void>((resolve) => (resume = resolve));
    return () => {
      this.appendsHeld = null;
      resume();
    };
  }

  /** Whether a record may be appended now; throws for a change that may not. A touch or sync record is skipped (false) while an append in pieces is under way. */
  private writable(change: boolean): boolean {
    if (this.closed) throw new Error("the session's log is closed");
    if (this.broken) {
      void this.rewrite().catch(() => {});
      throw new Error('an fsync of the log failed: it is being rewritten from memory, changes are refused until that is on stable storage');
    }
    if (this.inPieces) {
      if (!change) return false;
      throw new Error("a change was appended while another was being written in pieces (outside the session's write turn)");
    }
    if (this.state === 'fenced') this.repair();
    return true;
  }

  /** After a failed append: cut the log back to its whole records, or fence it until that succeeds. */
  private cutBack(fd: number): void {
    try {
      this.host.io.ftruncateSync(fd, this.wholeBytes);
    } catch (undo) {
      this.fence();
      console.error(`tempvec: session ${this.sessionId}: a failed append could not be cut back (${describe(undo)}); its changes are refused until it can`);
      return;
    }
    this.syncCut(fd);
  }

  /**
   * Make a cut durable before the log takes another record (both FSYNC modes): a truncate lost to a
   * power loss would bring back the failed append's whole records (an import's parts) behind new
   * records that filled the cut exactly. A failed fsync breaks the log (rewritten from memory).
   */
  private syncCut(fd: number): void {
    try {
      this.host.io.fsyncSync(fd);
    } catch (err) {
      console.error(
        `tempvec: fsync failed for the log of session ${this.sessionId} after a cut (${describe(err)}); its changes are refused until it is rewritten from memory`,
      );
      this.break();
    }
  }

  /** Cut a fenced log back to its whole records (throws while that still fails). */
  private repair(): void {
    const fd = this.open();
    this.host.io.ftruncateSync(fd, this.wholeBytes);
    this.unfence();
    this.syncCut(fd);
    if (this.broken) throw new Error('an fsync of the log failed after it was cut back: it is being rewritten from memory');
  }

  /** open -> fenced: the log may end in a partial record (a broken or closed log stays so: a rewrite replaces it whole). */
  private fence(): void {
    if (this.state === 'open') this.state = 'fenced';
  }

  /** fenced -> open: the log ends at its last whole record again. */
  private unfence(): void {
    if (this.state === 'fenced') this.state = 'open';
  }

  /** open or fenced -> broken: an fsync failed; the rewrite from memory starts (a closed log stays closed, nothing to rewrite). */
  private break(): void {
    if (this.closed) return;
    this.state = 'broken';
    void this.rewrite().catch(() => {});
  }

  /**
   * broken -> open: the log was rewritten from memory, renamed over and the
   * directory fsynced (compaction.ts), so every change appended is on stable storage.
   */
  rewritten(): void {
    if (this.state === 'broken') this.state = 'open';
    this.synced = this.written;
  }

  /** The session leaves the store (-> closed, for good): nothing more is written for it. */
  close(): void {
    this.state = 'closed';
    this.release();
  }

  /** The rewrite from memory of a broken log: one at a time (each call after a failed one tries again). */
  private rewrite(): Promise<void> {
    if (!this.rewriting) {
      const job = this.host.rewrite(this).finally(() => {
        this.rewriting = null;
      });
      this.rewriting = job;
    }
    return this.rewriting;
  }

  /** `bytes` of `count` records are on the log, whole. */
  private landed(at: number, bytes: number, count: number, change: boolean): void {
    this.wholeBytes += bytes;
    this.grown += bytes;
    this.lastSequence += count;
    this.host.resized(this);
    if (change) this.written++;
    // Every write moves the file's mtime: set it back to the last access (a sync record's `at` is -Infinity).
    this.recordedAccess = Math.max(at, this.recordedAccess);
    this.host.stamp(this.path, this.recordedAccess);
    if (this.due()) this.host.compactionDue(this);
  }

  /** Whether the log is due a compaction: it holds more than its live data by that data's size (and 1 MiB), and no failed one is waited out. */
  due(): boolean {
    return !this.compacting && !this.closed && this.grown > Math.max(COMPACT_MIN_BYTES, this.base) && this.host.now() >= this.compactAfter;
  }

  /** Whether a compaction may start now to make room (none under way, the log not broken, no failed one waited out). */
  mayCompact(): boolean {
    return !this.compacting && !this.broken && this.host.now() >= this.compactAfter;
  }

  /** A reopened log holds about `liveBytes` of live data (the rest is replaced or deleted data): compacted by that, not after it doubles again. */
  holds(liveBytes: number): void {
    this.base = Math.min(this.wholeBytes, liveBytes);
    this.grown = this.wholeBytes - this.base;
  }

  /** A compaction of the log runs as `job` (settles, never rejects): due() is false until it ends. */
  compactionStarted(job: Promise<void>): void {
    this.compactionJob = job;
    void job.finally(() => {
      if (this.compactionJob === job) this.compactionJob = null;
    });
  }

  /** The compaction succeeded: the next failure pauses the shortest time again. */
  compactionSucceeded(): void {
    this.compactFailures = 0;
  }

  /** The compaction failed: none starts for a pause that doubles with each failure in a row (1 s to 1 min); the pause in ms. */
  compactionFailed(): number {
    const pauseMs = Math.min(COMPACT_RETRY_MAX_MS, COMPACT_RETRY_MS * 2 ** this.compactFailures);
    this.compactFailures++;
    this.compactAfter = this.host.now() + pauseMs;
    return pauseMs;
  }

  /** Whether a read at `at` is to be recorded: none recorded or tried in the last `intervalMs` (the try is noted). */
  touchDue(at: number, intervalMs: number): boolean {
    if (at - Math.max(this.recordedAccess, this.touchTriedAt) < intervalMs) return false;
    this.touchTriedAt = at;
    return true;
  }

  /** The log, open for appends (kept open between them; the host caps how many logs stay open). */
  private open(): number {
    this.fd ??= this.host.io.openSync(this.path, 'r+');
    this.host.used(this);
    return this.fd;
  }

  /** Let go of the open file (a new one was renamed over it, the session left, or too many logs are open). */
  release(): void {
    // An append in pieces is writing to it: closed once that ends (the number could name another file by then).
    this.releaseAfterAppend = this.inPieces !== null;
    if (this.releaseAfterAppend) return;
    if (this.fd !== null) closeQuietly(this.host.io, this.fd);
    this.fd = null;
  }

  /** A new file renamed over the log (compaction.ts): `size` bytes of whole records, `fromTail` of them appended since its snapshot. */
  replaced(size: number, fromTail: number): void {
    this.release();
    this.renames++; // an fdatasync of the old file no longer counts
    this.renameUnsynced = false; // the new rename's directory fsync follows
    this.unfence(); // the new file ends at its last whole record
    this.wholeBytes = size;
    this.base = size - fromTail;
    this.grown = fromTail;
    this.host.resized(this);
  }

  /** The directory fsync that makes the last rename durable (fdatasyncs of the new file wait for it); null once it is done. */
  renameSyncing(dirSync: Promise<void> | null): void {
    this.renamed = dirSync;
  }

  /**
   * FSYNC=always: settles once every change appended so far is on stable
   * storage (rejects if fdatasync fails); undefined when there is nothing
   * to wait for.
   */
  durable(): Promise<void> | undefined {
    if (this.host.fsync !== 'always' || this.synced >= this.written) return undefined;
    return this.syncThrough(this.written);
  }

  private async syncThrough(target: number): Promise<void> {
    while (this.synced < target) {
      if (this.closed) throw new Error('the session was closed before its changes were synced');
      // After a failed fsync, the changes are on stable storage once the rewrite from memory is (it rejects if that fails).
      if (this.broken) await this.rewrite();
      else {
        this.syncing ??= this.syncOnce().finally(() => (this.syncing = null));
        await this.syncing.catch((err) => {
          if (!this.broken) throw err;
        });
      }
    }
  }

  private async syncOnce(): Promise<void> {
    const { io } = this.host;
    const upTo = this.written;
    const bytes = this.wholeBytes;
    const generation = this.renames;
    let fd: number;
    try {
      fd = await io.open(this.path, 'r');
    } catch (err) {
      // No fsync was tried (no file handle free: EMFILE): nothing is lost, the next sync covers these changes too.
      throw new SyncNotTriedError(`the log could not be opened to fsync it (${describe(err)})`);
    }
    try {
      if (this.renameUnsynced) {
        await this.host.syncDir();
        this.renameUnsynced = false;
      } else await this.renamed;
      await io.fdatasync(fd);
    } catch (err) {
      // A compaction renamed a new file (fsynced whole) over the log meanwhile: the old file's failure no longer matters.
      if (generation !== this.renames) return;
      // The directory could not be opened to fsync the rename: no fsync failed, the next sync tries it again.
      if (err instanceof SyncNotTriedError) {
        if (this.renamed) this.renameUnsynced = true;
        this.renamed = null;
        throw err;
      }
      if (!this.closed) {
        // fsyncgate: the kernel may have marked unwritten pages clean; the log no longer tells the truth.
        console.error(
          `tempvec: fsync failed for the log of session ${this.sessionId} (${describe(err)}); its changes are refused until it is rewritten from memory`,
        );
        this.break();
      }
      throw err;
    } finally {
      await io.close(fd).catch(() => {});
    }
    // A compaction renamed a new file over the log meanwhile: sync again, that one.
    if (generation !== this.renames) return;
    this.synced = Math.max(this.synced, upTo);
    // Say so in the log: a reopen then tells a damaged fsynced record from a power-loss tail (log-reader.ts).
    // Best-effort: without it, damage before this point is cut rather than set aside.
    if (this.state === 'open' || this.state === 'broken') {
      try {
        this.append(-Infinity, [encodeRecordV2({ t: 'synced', back: this.wholeBytes - bytes }, this.lastSequence + 1)], false);
      } catch {
        // the next fdatasync writes another
      }
    }
  }
}
