// One session's log file: appends at the end of its whole records (a failed
// one cut back off, or the file fenced until it can be; a large one written
// in pieces off the event loop), and FSYNC=always's group commit (every
// change appended while one fdatasync runs shares the next). After a failed
// fsync the file is "broken": nothing is appended or acknowledged until the
// host has rewritten it from memory (compaction.ts), since the page cache
// may hold pages the disk never will.
import type { FsyncMode } from '../../config.js';
import type { Session } from '../session.js';
import { closeQuietly, describe, SyncNotTriedError, writeAll, writeAllSync, type JournalFs } from './journal-fs.js';
import { encodeRecordV2 } from './records-v2.js';

/** A log is compacted once it has grown by this much and by its own compacted size since the last time. */
const COMPACT_MIN_BYTES = 1024 * 1024;

/** What a log file asks of the journal that holds it. */
export interface LogHost {
  readonly io: JournalFs;
  readonly fsync: FsyncMode;
  /** The log has grown by its own compacted size: compact it (in the background). */
  compactionDue(file: LogFile): void;
  /** After a failed fsync: rewrite the log from memory (settles once that is on stable storage). */
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

export class LogFile {
  readonly sessionId: string;
  /** Cutting a failed append back failed too: the file may end in a partial record until repaired. */
  fenced = false;
  /** The session left the store (expired, or dropped after a failed fsync): nothing more is written for it. */
  closed = false;
  /** lastAccessedAt last written, and when a touch was last tried (reads append one only now and then). */
  persistedAccess: number;
  touchTriedAt = 0;
  /** Bytes appended since the log was opened or compacted, and its size then. */
  appended = 0;
  base: number;
  compacting = false;
  /** The compaction under way (settles, never rejects). */
  compaction: Promise<void> | null = null;
  /** After a compaction failed: not tried again before this time (the host's clock), and failures in a row. */
  compactAfter = 0;
  compactFailures = 0;
  /** Changes appended, and how many of them fdatasync has confirmed (FSYNC=always). */
  written = 0;
  synced = 0;
  private syncing: Promise<void> | null = null;
  /** Bumped when a compaction or a rewrite renames a new file over the log. */
  generation = 0;
  /** The directory fsync that makes the last rename durable. */
  renamed: Promise<void> | null = null;
  /** That fsync could not be tried (the directory could not be opened): the next sync tries it first. */
  renameUnsynced = false;
  /**
   * An fsync of the log (or of the directory after its rename) failed: the page cache may hold
   * pages the disk never will, so nothing is appended or acknowledged until the log has been
   * rewritten from memory and fsynced (`rewriting`).
   */
  broken = false;
  rewriting: Promise<void> | null = null;
  /**
   * An append in pieces under way (settles, never rejects): until it ends no
   * other change is appended (the session's write turn holds it), a touch or
   * sync record is skipped, and a compaction or rewrite waits before it
   * renames a new file over the log.
   */
  appending: Promise<void> | null = null;
  /** A compaction's end: appends in pieces wait until it settles before they start. */
  private appendsHeld: Promise<void> | null = null;
  /** The log, open for appends (null until the first, and after a rename over it or close()). */
  private fd: number | null = null;
  /** release() came while an append in pieces used the file: it closes once that ends. */
  private releaseAfterAppend = false;

  constructor(
    private readonly host: LogHost,
    readonly path: string,
    /** What a compaction or a rewrite from memory writes. */
    readonly session: Session,
    /** Bytes of whole records on disk: the next append goes here, a failed one is cut back to it. */
    public size: number,
    /** The sequence of the last record written. */
    public sequence: number,
  ) {
    this.sessionId = session.id;
    this.persistedAccess = session.lastAccessedAt;
    this.base = size;
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
        writeAllSync(io, fd, record, this.size + bytes);
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
    const generation = this.generation;
    let bytes = 0;
    const pieces = (async () => {
      for (const record of records) {
        for (let from = 0; from < record.length; from += pieceBytes) {
          const piece = record.subarray(from, Math.min(record.length, from + pieceBytes));
          await writeAll(io, fd, piece, this.size + bytes);
          bytes += piece.length;
          if (this.closed || this.broken) throw new Error("the session's log was closed, or an fsync of it failed, while a change was written to it");
        }
      }
      if (this.generation !== generation) throw new Error('a new log was renamed over the one a change was written to'); // a bug: compaction and rewrite wait
    })();
    this.appending = pieces.catch(() => {});
    try {
      await pieces;
    } catch (err) {
      if (this.generation === generation) this.cutBack(fd);
      throw err;
    } finally {
      this.appending = null;
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
      void this.host.rewrite(this).catch(() => {});
      throw new Error('an fsync of the log failed: it is being rewritten from memory, changes are refused until that is on stable storage');
    }
    if (this.appending) {
      if (!change) return false;
      throw new Error("a change was appended while another was being written in pieces (outside the session's write turn)");
    }
    if (this.fenced) this.repair();
    return true;
  }

  /** After a failed append: cut the log back to its whole records, or fence it until that succeeds. */
  private cutBack(fd: number): void {
    try {
      this.host.io.ftruncateSync(fd, this.size);
    } catch (undo) {
      this.fenced = true;
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
      this.broken = true;
      void this.host.rewrite(this).catch(() => {});
    }
  }

  /** `bytes` of `count` records are on the log, whole. */
  private landed(at: number, bytes: number, count: number, change: boolean): void {
    this.size += bytes;
    this.appended += bytes;
    this.sequence += count;
    this.host.resized(this);
    if (change) this.written++;
    // Every write moves the file's mtime: set it back to the last access (a sync record's `at` is -Infinity).
    this.persistedAccess = Math.max(at, this.persistedAccess);
    this.host.stamp(this.path, this.persistedAccess);
    if (this.due()) this.host.compactionDue(this);
  }

  /** Whether the log is due a compaction: it holds more than its live data by that data's size (and 1 MiB), and no failed one is waited out. */
  due(): boolean {
    return !this.compacting && !this.closed && this.appended > Math.max(COMPACT_MIN_BYTES, this.base) && this.host.now() >= this.compactAfter;
  }

  /** A reopened log holds about `liveBytes` of live data (the rest is replaced or deleted data): compacted by that, not after it doubles again. */
  holds(liveBytes: number): void {
    this.base = Math.min(this.size, liveBytes);
    this.appended = this.size - this.base;
  }

  /** Cut a fenced log back to its whole records (throws while that still fails). */
  private repair(): void {
    const fd = this.open();
    this.host.io.ftruncateSync(fd, this.size);
    this.fenced = false;
    this.syncCut(fd);
    if (this.broken) throw new Error('an fsync of the log failed after it was cut back: it is being rewritten from memory');
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
    this.releaseAfterAppend = this.appending !== null;
    if (this.releaseAfterAppend) return;
    if (this.fd !== null) closeQuietly(this.host.io, this.fd);
    this.fd = null;
  }

  /** The session leaves the store: nothing more is written for it. */
  close(): void {
    this.closed = true;
    this.release();
  }

  /** A new file renamed over the log (compaction.ts): `size` bytes of whole records, `fromTail` of them appended since its snapshot. */
  replaced(size: number, fromTail: number): void {
    this.release();
    this.generation++; // an fdatasync of the old file no longer counts
    this.renameUnsynced = false; // the new rename's directory fsync follows
    this.fenced = false; // the new file ends at its last whole record
    this.size = size;
    this.base = size - fromTail;
    this.appended = fromTail;
    this.host.resized(this);
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
      if (this.broken) await this.host.rewrite(this);
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
    const bytes = this.size;
    const generation = this.generation;
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
      if (generation !== this.generation) return;
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
        this.broken = true;
        void this.host.rewrite(this).catch(() => {});
      }
      throw err;
    } finally {
      await io.close(fd).catch(() => {});
    }
    // A compaction renamed a new file over the log meanwhile: sync again, that one.
    if (generation !== this.generation) return;
    this.synced = Math.max(this.synced, upTo);
    // Say so in the log: a reopen then tells a damaged fsynced record from a power-loss tail (log-reader.ts).
    // Best-effort: without it, damage before this point is cut rather than set aside.
    if (!this.closed && !this.fenced) {
      try {
        this.append(-Infinity, [encodeRecordV2({ t: 'synced', back: this.size - bytes }, this.sequence + 1)], false);
      } catch {
        // the next fdatasync writes another
      }
    }
  }
}
