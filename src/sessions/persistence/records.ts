// The on-disk framing of a session log: a sequence of records, each
//   u32 payload length (LE) | u32 CRC-32 of the payload (LE) | payload (UTF-8 JSON object)
// A record is appended whole (or the append is undone) before the change it
// describes is acknowledged, and nothing is appended after a record that is
// not whole. So on reading, damage is told apart like this:
// - a torn tail is cut: the log ends in a record whose header announces more
//   bytes than the file holds (an append cut short by a crash or a power loss),
//   a partial header, or bytes that cannot start a record (zeros or garbage,
//   e.g. a power-loss tail of zero blocks); trailing zero bytes are never part
//   of a record (a payload ends with "}"). That append was never acknowledged.
// - a damaged record is corruption: a record the file holds whole (its length
//   fits, or the bytes after its header carry its checksum) whose checksum is
//   wrong, or any damage followed by a whole record. It was written in full,
//   so it may have been acknowledged: the session is set aside, not shortened.
import { crc32 } from 'node:zlib';

export const HEADER_BYTES = 8;
/** No record is larger than a 32 MiB body can describe; a bigger length means a damaged header. */
const MAX_PAYLOAD_BYTES = 256 * 1024 * 1024;
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
}

export class CorruptLogError extends Error {}

/** Decode a whole log; throws CorruptLogError when a record that was written whole is damaged. */
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
    if (length < 0) return { validBytes: offset, tornTail: tailAt(bytes, offset, end) };
    const payload = parsePayload(bytes, offset, length);
    offset += HEADER_BYTES + length;
    yield { payload, end: offset };
  }
  return { validBytes: offset, tornTail: offset < bytes.length ? `${bytes.length - offset} zero bytes after the last record cut` : null };
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

/**
 * What is wrong at `offset`, where no whole record starts: a torn tail (its
 * description) or, when a record written whole is damaged, CorruptLogError.
 */
function tailAt(bytes: Buffer, offset: number, end: number): string {
  const cut = `at byte ${offset} (${bytes.length - offset} bytes cut)`;
  for (let next = offset + 1; next < end; next++) {
    if (wholeRecordAt(bytes, next, end) >= 0) throw new CorruptLogError(`damaged record at byte ${offset}, followed by a whole record at byte ${next}`);
  }
  if (end - offset < HEADER_BYTES) return `partial record header ${cut}`;
  const length = bytes.readUInt32LE(offset);
  const payloadEnd = offset + HEADER_BYTES + length;
  const checksum = bytes.readUInt32LE(offset + 4);
  // The bytes after the header carry the header's checksum: the record is whole and only its length is damaged.
  if (crc32(bytes.subarray(offset + HEADER_BYTES, end)) === checksum && end - offset > HEADER_BYTES) {
    throw new CorruptLogError(`record at byte ${offset} has a damaged length`);
  }
  if (length > 0 && length <= MAX_PAYLOAD_BYTES && payloadEnd <= end) {
    throw new CorruptLogError(`record at byte ${offset} was written whole but fails its checksum`);
  }
  return `${length === 0 || length > MAX_PAYLOAD_BYTES ? 'bytes that cannot start a record' : 'record cut short'} ${cut}`;
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
