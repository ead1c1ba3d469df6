// DATA_DIR's files, by name: each session's log (named by its token hash,
// never the token), those set aside for the operator, and their bytes as
// counted against the quotas (disk-usage.ts). A log's mtime is its
// session's last recorded access, so a scan expires sessions on disk
// without opening their logs.
import { readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import { ConfigError, type FsyncMode } from '../../config.js';
import type { DiskUsage } from './disk-usage.js';
import { closeQuietly, describe, quietly, syncDir, writeAllSync, type JournalFs } from './journal-fs.js';

const LOG_NAME = /^([0-9a-f]{64})\.log$/;
/** A log set aside (setAside()): kept for the operator until the session TTL has passed, then deleted. */
const SET_ASIDE = /^[0-9a-f]{64}\.log\.(corrupt|other-format)$/;

export class LogDir {
  /** Bytes of each session's log, as counted (token hash -> bytes): those on disk only included. */
  private readonly logBytes = new Map<string, number>();
  /** Files set aside (path -> bytes, and when they were set aside): deleted once the session TTL has passed. */
  private readonly aside = new Map<string, { bytes: number; at: number }>();

  constructor(
    private readonly io: JournalFs,
    readonly dir: string,
    fsync: FsyncMode,
    /** The bytes of DATA_DIR, counted as they change, and the caps on them. */
    readonly usage: DiskUsage,
    /** The store's clock (when a file is set aside). */
    private readonly now: () => number,
  ) {
    this.check(fsync);
  }

  /** Start-up check: DATA_DIR exists (or can be made) and takes a file; ConfigError otherwise. */
  private check(fsync: FsyncMode): void {
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
        if (fsync === 'always') io.fsyncSync(fd);
      } finally {
        closeQuietly(io, fd);
        io.rmSync(probe);
      }
    } catch (err) {
      throw new ConfigError(`DATA_DIR "${dir}" is not writable, so no session could be saved (${describe(err)})`);
    }
  }

  pathOf(tokenHash: string): string {
    return join(this.dir, `${tokenHash}.log`);
  }

  /** Count a log at `bytes` (undefined: gone). */
  countLog(tokenHash: string, bytes: number | undefined): void {
    this.usage.add((bytes ?? 0) - (this.logBytes.get(tokenHash) ?? 0));
    if (bytes === undefined) this.logBytes.delete(tokenHash);
    else this.logBytes.set(tokenHash, bytes);
  }

  private countAside(path: string, bytes: number, at: number): void {
    this.aside.set(path, { bytes, at });
    this.usage.add(bytes);
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

  /** Rename a log that cannot be replayed aside (kept for the operator until the session TTL has passed, sweepSetAside()). */
  setAside(tokenHash: string, why: 'corrupt' | 'other-format'): void {
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

  /** Delete a session's log (it expired). Best-effort: a file left behind is an expired session the next start deletes. */
  removeLog(tokenHash: string): void {
    try {
      this.io.rmSync(this.pathOf(tokenHash));
      this.countLog(tokenHash, undefined);
    } catch (err) {
      console.error(`tempvec: could not delete the log of an expired session: ${describe(err)}`);
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
  stamp(path: string, at: number): void {
    quietly(() => this.io.utimesSync(path, at / 1000, at / 1000));
  }

  syncDir(): Promise<void> {
    return syncDir(this.io, this.dir);
  }
}
