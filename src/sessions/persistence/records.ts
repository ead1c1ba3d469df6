// The on-disk framing of a session log: a sequence of records, each
//   u32 payload length (LE) | u32 CRC-32 of the payload (LE) | payload (UTF-8 JSON)
// A record is written with one append, before the change it describes is
// acknowledged. On reading, a record whose length runs past the end of the
// file, or whose checksum is wrong and is the last one, is a torn tail (a
// crash mid-append: that change was never acknowledged) and is cut off; a bad
// record followed by more data means the file is corrupt.
import { crc32 } from 'node:zlib';

const HEADER_BYTES = 8;
/** No record is larger than a 32 MiB body can describe; a bigger length means a damaged header. */
const MAX_PAYLOAD_BYTES = 256 * 1024 * 1024;

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

/** Decode a whole log; throws CorruptLogError for damage before the last record. */
export function decodeLog(bytes: Buffer): DecodedLog {
  const records: unknown[] = [];
  let offset = 0;
  while (offset < bytes.length) {
    const problem = checkRecord(bytes, offset);
    if (problem) {
      if (problem.last) return { records, validBytes: offset, tornTail: `${problem.reason} at byte ${offset} (${bytes.length - offset} bytes cut)` };
      throw new CorruptLogError(`${problem.reason} at byte ${offset}, followed by more records`);
    }
    const length = bytes.readUInt32LE(offset);
    const body = bytes.subarray(offset + HEADER_BYTES, offset + HEADER_BYTES + length);
    try {
      records.push(JSON.parse(body.toString('utf8')));
    } catch {
      throw new CorruptLogError(`record at byte ${offset} has a valid checksum but is not JSON`);
    }
    offset += HEADER_BYTES + length;
  }
  return { records, validBytes: offset, tornTail: null };
}

/** null for a whole, valid record at `offset`; else what is wrong and whether it is the file's last. */
function checkRecord(bytes: Buffer, offset: number): { reason: string; last: boolean } | null {
  if (bytes.length - offset < HEADER_BYTES) return { reason: 'partial record header', last: true };
  const length = bytes.readUInt32LE(offset);
  if (length > MAX_PAYLOAD_BYTES) return { reason: `impossible record length ${length}`, last: false };
  const end = offset + HEADER_BYTES + length;
  if (end > bytes.length) return { reason: 'record runs past the end of the file', last: true };
  if (crc32(bytes.subarray(offset + HEADER_BYTES, end)) !== bytes.readUInt32LE(offset + 4)) {
    return { reason: 'checksum mismatch', last: end === bytes.length };
  }
  return null;
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
