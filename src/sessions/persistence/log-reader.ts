// Reading a log file in bounded pieces: records one at a time through a
// window of at most CHUNK_BYTES (a record larger than that gets a buffer of
// its own size, freed after it), whatever the file's size.
//
// The cut-or-refuse rule: the log is kept up to the first place where no
// whole record with a valid checksum starts (RocksDB's point-in-time
// recovery): after a power loss, pages the OS had not written back may be
// missing, zeroed or torn in any order, so a damaged record followed by whole
// ones is what an unsynced tail looks like too. The one exception: under
// FSYNC=always each fdatasync is followed by a "synced" record saying how far
// back the log was on stable storage; a damaged record that a later whole
// sync record covers was fsynced (FSYNC=always may have acknowledged it), so
// that is damage, not a power loss: CorruptLogError, the session is set aside
// rather than shortened.
import { PERSISTENCE_CHUNK_BYTES } from '../../config.js';
import {
  checkFileHeader,
  checksumHolds,
  CorruptLogError,
  FILE_HEADER_BYTES,
  RECORD_HEADER_BYTES,
  recordHeader,
  syncedBack,
  type RecordType,
  type RecordV2,
} from './records-v2.js';
import { decodeRecord } from './record-decoder.js';

/** Bytes of a log read at once (and the most a reader holds, but for one larger record). */
export const CHUNK_BYTES = PERSISTENCE_CHUNK_BYTES;

/** Reads up to `out.length` bytes at `position` into `out`; the count read (0 at the end). */
export type ReadAt = (out: Buffer, position: number) => Promise<number>;

/** Where the whole records of a log end, and what was cut after them. */
export interface LogEnd {
  /** Bytes of whole, valid records: the file is truncated to this on a torn tail. */
  validBytes: number;
  /** Why the tail was cut (null when the file ends cleanly). */
  tornTail: string | null;
  /** Whole records found after the damage, cut with it (changes not yet written back when the power failed). */
  cutRecords: number;
}

/** A whole, checked record of the file: `bytes` holds it at `at` (valid until the next call). */
export interface RawRecord {
  type: RecordType;
  sequence: number;
  bytes: Buffer;
  at: number;
  size: number;
}

/** Bytes a job holds, counted in the memory budget (MemoryBudget.hold). */
export interface Held {
  grow(bytes: number): void;
}

const UNCOUNTED: Held = { grow() {} };

export class LogReader {
  private window: Buffer;
  /** File offset of window[0], and bytes of it read. */
  private start = 0;
  private length = 0;

  constructor(
    private readonly readAt: ReadAt,
    readonly size: number,
    private readonly chunkBytes = CHUNK_BYTES,
    /** Told of every change in the bytes the reader holds. */
    private readonly held: Held = UNCOUNTED,
  ) {
    this.window = Buffer.allocUnsafe(Math.min(chunkBytes, Math.max(size, RECORD_HEADER_BYTES)));
    held.grow(this.window.length);
  }

  /** Bytes held now (the memory budget counts them). */
  get heldBytes(): number {
    return this.window.length;
  }

  /**
   * False when the file has no header (shorter than one, or zeros: a crash
   * while its session was created, before create() fsynced it and returned);
   * throws FormatError unless it starts with a version 2 header.
   */
  async checkHeader(): Promise<boolean> {
    const have = await this.ensure(0, FILE_HEADER_BYTES);
    const header = this.window.subarray(0, have);
    if (have < FILE_HEADER_BYTES || header.every((byte) => byte === 0)) return false;
    checkFileHeader(header);
    return true;
  }

  /** The whole, valid record at `offset`, or null where none starts. */
  async recordAt(offset: number): Promise<RawRecord | null> {
    if (this.size - offset < RECORD_HEADER_BYTES) return null;
    await this.ensure(offset, RECORD_HEADER_BYTES);
    const { type, size } = recordHeader(this.window, offset - this.start);
    if (type === null || offset + size > this.size) return null;
    await this.ensure(offset, size);
    const at = offset - this.start;
    if (!checksumHolds(this.window, at, size)) return null;
    return { type, sequence: this.window.readDoubleLE(at + 16), bytes: this.window, at, size };
  }

  /** The record at `offset`, decoded; `copy` false: its rows and metadata may be views of the window, valid until the reader's next read. */
  static decode(raw: RawRecord, copy = true): RecordV2 {
    return decodeRecord(raw.bytes, raw.at, raw.size, copy);
  }

  /**
   * The log is cut at `offset`, where no whole record starts, unless a whole
   * sync record after it says `offset` was on stable storage: then an
   * acknowledged record is damaged (CorruptLogError).
   */
  async damageAt(offset: number): Promise<LogEnd> {
    let cutRecords = 0;
    for (let next = offset + 1; next < this.size; ) {
      const raw = await this.recordAt(next);
      if (!raw) {
        next++;
        continue;
      }
      cutRecords++;
      const back = syncedBack(raw.bytes, raw.at);
      if (back !== null && next - back > offset) {
        throw new CorruptLogError(
          `damaged record at byte ${offset}, which the sync record at byte ${next} says was on stable storage (FSYNC=always may have acknowledged it)`,
        );
      }
      next += raw.size;
    }
    const what = this.size - offset < RECORD_HEADER_BYTES ? 'a partial record header' : 'a torn or damaged record';
    return { validBytes: offset, tornTail: `${what} at byte ${offset} (${this.size - offset} bytes cut, ${cutRecords} whole records after it)`, cutRecords };
  }

  /** Make bytes [offset, offset + n) of the file sit in the window; the bytes available from offset (fewer at the file's end). */
  private async ensure(offset: number, n: number): Promise<number> {
    if (offset >= this.start && offset + n <= this.start + this.length) return n;
    const want = Math.min(Math.max(n, this.chunkBytes), this.size - offset);
    // A record larger than a chunk: a buffer of its size, for it alone.
    if (want > this.window.length || (this.window.length > this.chunkBytes && want <= this.chunkBytes)) {
      const before = this.window.length;
      this.window = Buffer.allocUnsafe(Math.max(want, Math.min(this.chunkBytes, this.size)));
      this.held.grow(this.window.length - before);
    }
    let read = 0;
    while (read < want) {
      const got = await this.readAt(this.window.subarray(read, want), offset + read);
      if (!(got > 0)) break;
      read += got;
    }
    this.start = offset;
    this.length = read;
    return Math.min(n, read);
  }
}

/** The records of a log one at a time, decoded, each with its sequence and the offset after it; then where the whole records end. */
export async function* readLog(reader: LogReader): AsyncGenerator<{ record: RecordV2; sequence: number; end: number }, LogEnd> {
  if (!(await reader.checkHeader())) return { validBytes: 0, tornTail: null, cutRecords: 0 };
  let offset = FILE_HEADER_BYTES;
  while (offset < reader.size) {
    const raw = await reader.recordAt(offset);
    if (!raw) return reader.damageAt(offset);
    offset += raw.size;
    yield { record: LogReader.decode(raw), sequence: raw.sequence, end: offset };
  }
  return { validBytes: offset, tornTail: null, cutRecords: 0 };
}

/** A ReadAt over bytes in memory (tests). */
export function readFromBuffer(bytes: Buffer): ReadAt {
  return async (out, position) => bytes.copy(out, 0, position, Math.min(bytes.length, position + out.length));
}
