// Session log records, version 2 (issue 25): binary. The journal does not
// write them yet; this is the codec the next steps of the series switch it to.
//
// A file starts with FILE_HEADER_BYTES: "TVECLOG\n", u32 format version, u32
// checksum of those 12 bytes. A file without it, or of another version, is
// not read (FormatError: the caller sets it aside and counts it).
// A record is RECORD_HEADER_BYTES then its payload:
//   u32 checksum of everything after it | u8 type | 3 bytes 0 | u32 payload length | u32 0 | f64 sequence
// The checksum is CRC-32 (node:zlib's, native): Node has no native CRC-32C,
// and a JS one would cost more than the JSON it replaces. Payloads keep
// float32 rows 4-byte aligned when the record is (a header is 24 bytes and
// every fixed head a multiple of 8): rows raw little-endian, ids UTF-8,
// metadata the UTF-8 JSON bytes the metadata arena stores (0 bytes: none).
// Damage is told apart from a power-loss tail as in records.ts (damageAt).
import { crc32 } from 'node:zlib';
import { METRICS, VECTOR_TYPES, type Metric, type VectorType } from '../../config.js';
import { CorruptLogError, damageAt, type DecodedLog, type Framing } from './records.js';

export const FILE_MAGIC = Buffer.from('TVECLOG\n', 'latin1');
export const FORMAT_VERSION = 2;
export const FILE_HEADER_BYTES = 16;
export const RECORD_HEADER_BYTES = 24;

const TYPES = ['open', 'upsert', 'import', 'metadata', 'delete', 'clear', 'reset', 'touch', 'synced'] as const;
type RecordType = (typeof TYPES)[number];

interface Rows { at: number; dimensions: number; metric: Metric; vectorType: VectorType; ids: string[]; rows: Float32Array; metadata: (Uint8Array | null)[] }

export type RecordV2 =
  | { t: 'open'; sessionId: string; createdAt: number }
  | ({ t: 'upsert' } & Rows)
  /** One part of an import: applied only once all `parts` are read. */
  | ({ t: 'import'; part: number; parts: number } & Rows)
  | { t: 'metadata'; at: number; id: string; metadata: Uint8Array }
  | { t: 'delete'; at: number; ids: string[] }
  | { t: 'clear' | 'reset' | 'touch'; at: number }
  | { t: 'synced'; back: number };

/** A log that is not version 2 of this format. */
export class FormatError extends Error {}

export function fileHeader(): Buffer {
  const out = Buffer.alloc(FILE_HEADER_BYTES);
  FILE_MAGIC.copy(out, 0);
  out.writeUInt32LE(FORMAT_VERSION, 8);
  out.writeUInt32LE(crc32(out.subarray(0, 12)), 12);
  return out;
}

/** Throws FormatError unless `bytes` starts with a version 2 file header. */
export function checkFileHeader(bytes: Buffer): void {
  if (bytes.length < FILE_HEADER_BYTES || !bytes.subarray(0, 8).equals(FILE_MAGIC) || bytes.readUInt32LE(12) !== crc32(bytes.subarray(0, 12))) {
    throw new FormatError('the log does not start with a tempvec log header (another format, or damaged)');
  }
  const version = bytes.readUInt32LE(8);
  if (version !== FORMAT_VERSION) throw new FormatError(`the log is format version ${version}; this server reads version ${FORMAT_VERSION}`);
}

export function encodeRecordV2(record: RecordV2, sequence: number): Buffer {
  const payload = encodePayload(record);
  const out = Buffer.alloc(RECORD_HEADER_BYTES + payload.length);
  out.writeUInt8(TYPES.indexOf(record.t) + 1, 4);
  out.writeUInt32LE(payload.length, 8);
  out.writeDoubleLE(sequence, 16);
  payload.copy(out, RECORD_HEADER_BYTES);
  out.writeUInt32LE(crc32(out.subarray(4)), 0);
  return out;
}

const V2_FRAMING: Framing = {
  recordBytesAt(bytes, offset, end) {
    if (end - offset < RECORD_HEADER_BYTES) return -1;
    const type = bytes[offset + 4];
    const size = RECORD_HEADER_BYTES + bytes.readUInt32LE(offset + 8);
    if (type < 1 || type > TYPES.length || offset + size > end) return -1;
    return crc32(bytes.subarray(offset + 4, offset + size)) === bytes.readUInt32LE(offset) ? size : -1;
  },
  syncedBack(bytes, offset) {
    return bytes[offset + 4] === TYPES.indexOf('synced') + 1 ? bytes.readDoubleLE(offset + RECORD_HEADER_BYTES) : null;
  },
};

/** The records of a version 2 log (its file header checked first), each with its sequence; then where the whole records end. */
export function* walkLogV2(bytes: Buffer): Generator<{ record: RecordV2; sequence: number; end: number }, Omit<DecodedLog, 'records'>> {
  checkFileHeader(bytes);
  let offset = FILE_HEADER_BYTES;
  while (offset < bytes.length) {
    const size = V2_FRAMING.recordBytesAt(bytes, offset, bytes.length);
    if (size < 0) return damageAt(bytes, offset, bytes.length, V2_FRAMING);
    const type = TYPES[bytes[offset + 4] - 1];
    const record = decodePayload(type, bytes.subarray(offset + RECORD_HEADER_BYTES, offset + size));
    yield { record, sequence: bytes.readDoubleLE(offset + 16), end: offset + size };
    offset += size;
  }
  return { validBytes: offset, tornTail: null, cutRecords: 0 };
}

const utf8 = new TextEncoder();
const fromUtf8 = new TextDecoder();

/** A payload written field by field (little-endian, fixed heads padded to 8 bytes). */
class Writer {
  private parts: Buffer[] = [];
  private head = Buffer.alloc(64);
  private at = 0;

  f64(value: number): this {
    this.head.writeDoubleLE(value, this.at);
    this.at += 8;
    return this;
  }

  u32(value: number): this {
    this.head.writeUInt32LE(value, this.at);
    this.at += 4;
    return this;
  }

  u8(value: number): this {
    this.head.writeUInt8(value, this.at);
    this.at += 1;
    return this;
  }

  /** The fixed head so far (padded to 8 bytes), then `bytes`. */
  bytes(bytes: Uint8Array): this {
    this.flush();
    this.parts.push(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
    return this;
  }

  private flush(): void {
    if (this.at === 0) return;
    this.parts.push(Buffer.from(this.head.subarray(0, Math.ceil(this.at / 8) * 8)));
    this.head = Buffer.alloc(64);
    this.at = 0;
  }

  done(): Buffer {
    this.flush();
    return Buffer.concat(this.parts);
  }
}

function lengths(items: Uint8Array[]): Uint8Array {
  return new Uint8Array(Uint32Array.from(items, (item) => item.length).buffer);
}

function encodePayload(record: RecordV2): Buffer {
  const w = new Writer();
  switch (record.t) {
    case 'open': {
      const id = utf8.encode(record.sessionId);
      return w.f64(record.createdAt).u32(id.length).bytes(id).done();
    }
    case 'upsert':
    case 'import': {
      const ids = record.ids.map((id) => utf8.encode(id));
      const metadata = record.metadata.map((m) => m ?? new Uint8Array(0));
      w.f64(record.at).u32(record.dimensions).u32(record.ids.length)
        .u8(METRICS.indexOf(record.metric)).u8(VECTOR_TYPES.indexOf(record.vectorType)).u8(0).u8(0)
        .u32(record.t === 'import' ? record.part : 0).u32(record.t === 'import' ? record.parts : 1);
      w.bytes(new Uint8Array(record.rows.buffer, record.rows.byteOffset, record.rows.byteLength));
      w.bytes(lengths(ids)).bytes(lengths(metadata));
      for (const id of ids) w.bytes(id);
      for (const m of metadata) w.bytes(m);
      return w.done();
    }
    case 'metadata': {
      const id = utf8.encode(record.id);
      return w.f64(record.at).u32(id.length).u32(record.metadata.length).bytes(id).bytes(record.metadata).done();
    }
    case 'delete': {
      const ids = record.ids.map((id) => utf8.encode(id));
      w.f64(record.at).u32(ids.length).bytes(lengths(ids));
      for (const id of ids) w.bytes(id);
      return w.done();
    }
    case 'synced':
      return w.f64(record.back).done();
    default:
      return w.f64(record.at).done();
  }
}

/** Reads a payload field by field; a field past its end is damage the checksum did not catch (a bug, or a forged file). */
class Reader {
  private at = 0;
  constructor(private readonly bytes: Buffer) {}

  private take(n: number): number {
    const at = this.at;
    if (at + n > this.bytes.length) throw new CorruptLogError(`a record's payload ends at byte ${this.bytes.length}, before its fields do`);
    this.at += n;
    return at;
  }

  f64(): number {
    return this.bytes.readDoubleLE(this.take(8));
  }

  u32(): number {
    return this.bytes.readUInt32LE(this.take(4));
  }

  u8(): number {
    return this.bytes.readUInt8(this.take(1));
  }

  /** The end of a fixed head: padding to 8 bytes. */
  pad(): this {
    this.take((8 - (this.at % 8)) % 8);
    return this;
  }

  slice(n: number): Buffer {
    const at = this.take(n);
    return this.bytes.subarray(at, at + n);
  }

  lengths(count: number): number[] {
    const out: number[] = [];
    for (let i = 0; i < count; i++) out.push(this.u32());
    return out;
  }

  strings(lengths: number[]): string[] {
    return lengths.map((n) => fromUtf8.decode(this.slice(n)));
  }
}

function decodePayload(type: RecordType, payload: Buffer): RecordV2 {
  const r = new Reader(payload);
  switch (type) {
    case 'open': {
      const createdAt = r.f64();
      const length = r.u32();
      r.pad();
      return { t: 'open', createdAt, sessionId: fromUtf8.decode(r.slice(length)) };
    }
    case 'upsert':
    case 'import': {
      const at = r.f64();
      const dimensions = r.u32();
      const count = r.u32();
      const metric = METRICS[r.u8()];
      const vectorType = VECTOR_TYPES[r.u8()];
      r.u8();
      r.u8();
      const part = r.u32();
      const parts = r.u32();
      r.pad();
      // A copy: the file's buffer is let go once read, and its offset may not be 4-byte aligned.
      const rows = new Float32Array(count * dimensions);
      new Uint8Array(rows.buffer).set(r.slice(rows.byteLength));
      const idLengths = r.lengths(count);
      const metadataLengths = r.lengths(count);
      const ids = r.strings(idLengths);
      const metadata = metadataLengths.map((n) => (n === 0 ? null : Uint8Array.from(r.slice(n))));
      if (metric === undefined || vectorType === undefined) throw new CorruptLogError('a record names an unknown metric or vector type');
      const rowsOf: Rows = { at, dimensions, metric, vectorType, ids, rows, metadata };
      return type === 'import' ? { t: 'import', part, parts, ...rowsOf } : { t: 'upsert', ...rowsOf };
    }
    case 'metadata': {
      const at = r.f64();
      const idLength = r.u32();
      const metadataLength = r.u32();
      return { t: 'metadata', at, id: fromUtf8.decode(r.slice(idLength)), metadata: Uint8Array.from(r.slice(metadataLength)) };
    }
    case 'delete': {
      const at = r.f64();
      const count = r.u32();
      r.pad();
      return { t: 'delete', at, ids: r.strings(r.lengths(count)) };
    }
    case 'synced':
      return { t: 'synced', back: r.f64() };
    default:
      return { t: type, at: r.f64() };
  }
}
