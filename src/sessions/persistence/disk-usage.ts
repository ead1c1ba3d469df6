// The bytes of DATA_DIR, counted in memory as the journal changes them
// (never a stat per write): every log, the files set aside, and the
// temporary files of compactions and rewrites under way; and the two caps
// on them, DATA_DIR_MAX_BYTES (all of it) and MAX_SESSION_LOG_BYTES (one
// log). A change past either is refused with 507 before any of it is
// written, so nothing acknowledged is ever lost to a full disk.
import { apiError } from '../../errors.js';

/** Seconds a change refused for disk space is asked to wait (a compaction started for it takes about that). */
const RETRY_AFTER_SECONDS = 5;

export class DiskUsage {
  /** Bytes of the files in DATA_DIR, as counted. */
  used = 0;

  constructor(
    /** DATA_DIR_MAX_BYTES (0: no quota). */
    readonly maxBytes: number,
    /** MAX_SESSION_LOG_BYTES (0: no cap). */
    readonly maxLogBytes: number,
  ) {}

  add(bytes: number): void {
    this.used += bytes;
  }

  /** Throw 507 when `bytes` more on a log of `logBytes` would pass a cap; `compacting`: a compaction is making room. */
  assertRoom(logBytes: number, bytes: number, compacting: boolean): void {
    const retry = compacting ? { 'Retry-After': String(RETRY_AFTER_SECONDS) } : undefined;
    const then = compacting ? 'its log is being compacted to make room, try again in a few seconds' : 'delete vectors or clear the session to make room';
    if (this.maxLogBytes > 0 && logBytes + bytes > this.maxLogBytes) {
      throw apiError(
        'SESSION_LOG_FULL',
        `this change (${bytes} bytes on disk) would take the session's log past its cap of ${this.maxLogBytes} bytes (MAX_SESSION_LOG_BYTES); nothing was changed, ${then}`,
        { maxSessionLogBytes: this.maxLogBytes, logBytes, changeBytes: bytes },
        retry,
      );
    }
    if (this.maxBytes > 0 && this.used + bytes > this.maxBytes) {
      throw apiError(
        'DISK_QUOTA_EXCEEDED',
        `this change (${bytes} bytes on disk) would take the server's data directory past its quota of ${this.maxBytes} bytes (DATA_DIR_MAX_BYTES); nothing was changed, try again later`,
        { dataDirMaxBytes: this.maxBytes, dataDirBytes: this.used, changeBytes: bytes },
        retry ?? { 'Retry-After': '60' },
      );
    }
  }
}
