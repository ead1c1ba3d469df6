// The on-disk framing of a session log: a sequence of records, each
//   u32 payload length (LE) | u32 CRC-32 of the payload (LE) | payload (UTF-8 JSON object)
// A record is appended whole (or the append is undone) before the change it
// describes is acknowledged. On reading, the log is kept up to the first place
// where no whole record with a valid checksum starts (RocksDB's point-in-time
// recovery): after a power loss, pages the OS had not written back may be
// missing, zeroed or torn in any order, so a damaged record followed by whole
// ones is what an unsynced tail looks like too. The one exception: under
// FSYNC=always each fdatasync is followed by a "synced" record saying how far
// back the log was on stable storage; a damaged record that a later whole
// "synced" record covers was fsynced (FSYNC=always may have acknowledged it),
// so that is damage, not a power loss: CorruptLogError, the session is set
// aside rather than shortened.
import { crc32 } from 'node:zlib';

export const HEADER_BYTES = 8;
const OPEN_BRACE = 0x7b;
const CLOSE_BRACE = 0x7d;

export function encodeRecord(payload: unknown): Buffer {
  const body = Buffer.from(JSON.stringify(payload), 'utf8');
  const header = Buffer.alloc(HEADER_BYTES);
  header.writeUInt32LE(body.length, 0);
  header.writeUInt32LE(crc32(body), 4);
  return Buffer.concat([header, body]);
}

export interface DecodedLog {
  records: unknown[];
  /** Bytes of whole, valid records: the file is truncated to this on a torn tail. */
  validBytes: number;
  /** Why the tail was cut (null when the file ends cleanly). */
  tornTail: string | null;
  /** Whole records found after the damage, cut with it (changes not yet written back when the power failed). */
  cutRecords: number;
}

export class CorruptLogError extends Error {}

/** Decode a whole log; throws CorruptLogError when a record that was on stable storage is damaged. */
export function decodeLog(bytes: Buffer): DecodedLog {
  const records: unknown[] = [];
  const walk = walkLog(bytes);
  for (let step = walk.next(); ; step = walk.next()) {
    if (step.done) return { records, ...step.value };
    records.push(step.value.payload);
  }
}

/** The records of a log one at a time (callers may pause between them), each with the offset after it; then where the whole records end. */
export function* walkLog(bytes: Buffer): Generator<{ payload: unknown; end: number }, Omit<DecodedLog, 'records'>> {
  const end = dataEnd(bytes);
  let offset = 0;
  while (offset < end) {
    const length = wholeRecordAt(bytes, offset, end);
    if (length < 0) return damageAt(bytes, offset, end);
    const payload = parsePayload(bytes, offset, length);
    offset += HEADER_BYTES + length;
    yield { payload, end: offset };
  }
  const zeros = bytes.length - offset;
  return { validBytes: offset, tornTail: zeros > 0 ? `${zeros} zero bytes after the last record cut` : null, cutRecords: 0 };
}

/** The payload of the whole record at `offset`, parsed. */
export function parsePayload(bytes: Buffer, offset: number, length: number): unknown {
  try {
    return JSON.parse(bytes.toString('utf8', offset + HEADER_BYTES, offset + HEADER_BYTES + length));
  } catch {
    throw new CorruptLogError(`record at byte ${offset} has a valid checksum but is not JSON`);
  }
}

/** The end of the file without its trailing zero bytes (no record ends in one). */
export function dataEnd(bytes: Buffer): number {
  let end = bytes.length;
  while (end > 0 && bytes[end - 1] === 0) end--;
  return end;
}

/** The payload length of a whole, valid record at `offset` (ending by `end`), or -1. */
export function wholeRecordAt(bytes: Buffer, offset: number, end: number): number {
  if (end - offset < HEADER_BYTES) return -1;
  const length = bytes.readUInt32LE(offset);
  const stop = offset + HEADER_BYTES + length;
  if (length < 2 || stop > end || bytes[offset + HEADER_BYTES] !== OPEN_BRACE || bytes[stop - 1] !== CLOSE_BRACE) return -1;
  return crc32(bytes.subarray(offset + HEADER_BYTES, stop)) === bytes.readUInt32LE(offset + 4) ? length : -1;
}

/** How a framing finds whole records, for the cut-or-refuse rule that every format shares. */
export interface Framing {
  /** Bytes of the whole, valid record at `offset` (ending by `end`), or -1. */
  recordBytesAt(bytes: Buffer, offset: number, end: number): number;
  /** The whole record at `offset` (`size` bytes) is a sync record: how far back from `offset` the log was on stable storage. */
  syncedBack(bytes: Buffer, offset: number, size: number): number | null;
}

const JSON_FRAMING: Framing = {
  recordBytesAt(bytes, offset, end) {
    const length = wholeRecordAt(bytes, offset, end);
    return length < 0 ? -1 : HEADER_BYTES + length;
  },
  syncedBack(bytes, offset, size) {
    const payload = parseQuietly(bytes, offset, size - HEADER_BYTES) as { t?: unknown; back?: unknown } | null;
    return payload?.t === 'synced' && typeof payload.back === 'number' ? payload.back : null;
  },
};

/**
 * The log is cut at `offset`, where no whole record starts, unless a whole
 * sync record after it says `offset` was on stable storage: then an
 * acknowledged record is damaged (CorruptLogError).
 */
export function damageAt(bytes: Buffer, offset: number, end: number, framing: Framing = JSON_FRAMING): Omit<DecodedLog, 'records'> {
  let cutRecords = 0;
  for (let next = offset + 1; next < end;) {
    const size = framing.recordBytesAt(bytes, next, end);
    if (size < 0) {
      next++;
      continue;
    }
    cutRecords++;
    const back = framing.syncedBack(bytes, next, size);
    if (back !== null && next - back > offset) {
      throw new CorruptLogError(`damaged record at byte ${offset}, which the sync record at byte ${next} says was on stable storage (FSYNC=always may have acknowledged it)`);
    }
    next += size;
  }
  const what = end - offset < HEADER_BYTES ? 'a partial record header' : 'a torn or damaged record';
  return { validBytes: offset, tornTail: `${what} at byte ${offset} (${bytes.length - offset} bytes cut, ${cutRecords} whole records after it)`, cutRecords };
}

function parseQuietly(bytes: Buffer, offset: number, length: number): unknown {
  try {
    return parsePayload(bytes, offset, length);
  } catch {
    return null;
  }
}

/** Float32 rows as base64 (exact, and a third the size of decimal JSON). */
export function float32ToBase64(values: Float32Array): string {
  return Buffer.from(values.buffer, values.byteOffset, values.byteLength).toString('base64');
}

export function base64ToFloat32(text: string): Float32Array {
  const bytes = Buffer.from(text, 'base64');
  const out = new Float32Array(bytes.length / 4);
  new Uint8Array(out.buffer).set(bytes);
  return out;
}
