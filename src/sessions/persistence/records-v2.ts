// Session log records, version 2 (issue 25): binary.
//
// A file starts with FILE_HEADER_BYTES: "TVECLOG\n", u32 format version, u32
// checksum of those 12 bytes. A file without it, or of another version, is
// not read (FormatError: the caller sets it aside and counts it).
// A record is RECORD_HEADER_BYTES then its payload:
//   u32 checksum | u8 type | 3 bytes 0 | u32 payload length | u32 header checksum | f64 sequence
// The header checksum covers the type, length and sequence, so a reader that
// looks for whole records after damage reads no payload a garbled length
// names. The checksum covers the payload, then the 20 header bytes after it
// (in that order, so bytes encoded ahead get their sequence when written
// without reading the payload again). The sequence counts a log's records; a
// compaction's snapshot records carry that of the last change they hold.
// The checksum is CRC-32 (node:zlib's, native, ~1 GB/s here): Node has no
// native CRC-32C, and a JS one runs at a fraction of that. Payloads: rows raw
// little-endian float32, ids UTF-8, metadata the UTF-8 JSON bytes the
// metadata arena stores (0 bytes: none), and an optional text section: each
// text as the index stores it, a JSON string literal (0 bytes: none); an
// endpoint's embedding model's name (its length in the head); and
// (flag HAS_TTL, issue 36) a ttl section: each row's ttlMs and absolute
// expiresAt as f64 (0: none). A renew record (POST /vectors/touch) holds ids
// and their new absolute expiries: a replay expires every record at the
// instant it expired live. Logs without these read as before.
// Damage is told apart from a power-loss tail by log-reader.ts (damageAt).
// Decoding is in record-decoder.ts.
import { crc32 } from 'node:zlib';
import {
  ANALYZERS,
  BUILTIN_EMBEDDING_MODEL,
  type EmbeddingModel,
  METRICS,
  VECTOR_TYPES,
  type AnalyzerName,
  type Metric,
  type VectorType,
} from '../../config.js';
import type { RowTtl } from '../../index/row-expiry.js';
import type { Slices } from '../../limits/slices.js';
import { runSteps } from '../../limits/steps.js';

/** A log whose records cannot be read as they were written: set aside, not shortened. */
export class CorruptLogError extends Error {}

export const FILE_MAGIC = Buffer.from('TVECLOG\n', 'latin1');
export const FORMAT_VERSION = 2;
export const FILE_HEADER_BYTES = 16;
export const RECORD_HEADER_BYTES = 24;
/**
 * An upsert's fixed head: at, dimensions, count, metric, vector type, analyzer,
 * flags, part, parts, embedding model code (0 none, 1 the builtin model, 2 an
 * endpoint's model named at the payload's end) and that name's length (padded to 8).
 */
export const ROWS_HEAD_BYTES = 32;
export const HAS_TEXT = 1;
/** An upsert's rows carry a ttl section: per row its ttlMs and expiresAt, f64 each (0 and 0: none), after the fields. */
export const HAS_TTL = 2;
export const LITTLE_ENDIAN = new Uint8Array(Uint32Array.of(1).buffer)[0] === 1;

const TYPES = ['open', 'upsert', 'import', 'metadata', 'delete', 'clear', 'reset', 'touch', 'synced', 'renew'] as const;
export type RecordType = (typeof TYPES)[number];
/** The analyzer of a session's texts (issue 28); null until a text fixes one. */
export type Analyzer = AnalyzerName | null;

/** What an upsert (or an import part) writes besides its rows: the session's configuration, fixed by its first add. */
export interface RowsHead {
  at: number;
  dimensions: number;
  metric: Metric;
  vectorType: VectorType;
  /** Sessions with text only; absent (0 on disk) reads back as null. */
  analyzer?: Analyzer;
  /** Sessions whose texts are embedded only (issue 35); absent (0 on disk, and in logs from before) reads back as null. */
  embedding?: EmbeddingModel | null;
}

/** Rows as a record holds them: flat float32 values, ids, metadata JSON bytes (null: none), text bytes (null: no text section). */
export interface Rows {
  ids: string[];
  rows: Float32Array;
  metadata: (Uint8Array | null)[];
  text: (Uint8Array | null)[] | null;
  /** Each row's ttl and expiry (null: none); absent or null: no ttl section. */
  ttls?: (RowTtl | null)[] | null;
}

/** Rows to encode, read one at a time (a plan's, an export's, a decoded record's). */
export interface RowSource {
  count: number;
  id(i: number): string;
  vector(i: number): Float32Array;
  /** JSON bytes, or text; null or empty: none. */
  metadata(i: number): Uint8Array | string | null;
  /** Absent: no text section. */
  text?: (i: number) => Uint8Array | string | null;
  /** Absent: no ttl section. */
  ttl?: (i: number) => RowTtl | null;
}

export type RecordV2 =
  | { t: 'open'; sessionId: string; createdAt: number }
  | ({ t: 'upsert' } & RowsHead & Rows)
  /** One part of an import: applied only once all `parts` are read. */
  | ({ t: 'import'; part: number; parts: number } & RowsHead & Rows)
  | { t: 'metadata'; at: number; id: string; metadata: Uint8Array }
  | { t: 'delete'; at: number; ids: string[] }
  /** Records' expiries set anew (POST /vectors/touch), absolute. */
  | { t: 'renew'; at: number; ids: string[]; expiresAt: number[] }
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

/** A record's header at `offset`: its type (null: not a known type) and whole size. */
export function recordHeader(bytes: Buffer, offset: number): { type: RecordType | null; size: number } {
  const code = bytes[offset + 4];
  const valid = code >= 1 && code <= TYPES.length && headerChecksum(bytes, offset) === bytes.readUInt32LE(offset + 12);
  return { type: valid ? TYPES[code - 1] : null, size: RECORD_HEADER_BYTES + bytes.readUInt32LE(offset + 8) };
}

function headerChecksum(bytes: Buffer, offset: number): number {
  return crc32(bytes.subarray(offset + 16, offset + 24), crc32(bytes.subarray(offset + 4, offset + 12)));
}

/** Whether the record at `offset` (`size` bytes, all in `bytes`) has a valid checksum. */
export function checksumHolds(bytes: Buffer, offset: number, size: number): boolean {
  const payload = crc32(bytes.subarray(offset + RECORD_HEADER_BYTES, offset + size));
  return crc32(bytes.subarray(offset + 4, offset + RECORD_HEADER_BYTES), payload) === bytes.readUInt32LE(offset);
}

/** The sync record at `offset`: how far back from it the log was on stable storage; null for any other type. */
export function syncedBack(bytes: Buffer, offset: number): number | null {
  return bytes[offset + 4] === TYPES.indexOf('synced') + 1 ? bytes.readDoubleLE(offset + RECORD_HEADER_BYTES) : null;
}

/**
 * Give a record its header: type, length, `sequence` and the checksum
 * (`payloadCrc`: the payload's CRC-32 if known, as for bytes encoded ahead).
 */
export function sealRecord(out: Buffer, type: RecordType, sequence: number, payloadCrc = crc32(out.subarray(RECORD_HEADER_BYTES))): Buffer {
  out.fill(0, 0, RECORD_HEADER_BYTES);
  out.writeUInt8(TYPES.indexOf(type) + 1, 4);
  out.writeUInt32LE(out.length - RECORD_HEADER_BYTES, 8);
  out.writeDoubleLE(sequence, 16);
  out.writeUInt32LE(headerChecksum(out, 0), 12);
  out.writeUInt32LE(crc32(out.subarray(4, RECORD_HEADER_BYTES), payloadCrc), 0);
  return out;
}

/** The type of the (sealed) record `bytes`. */
export function typeOf(bytes: Buffer): RecordType {
  return TYPES[bytes[4] - 1];
}

const utf8 = new TextEncoder();

const header = (out: Buffer, type: RecordType, sequence: number) => sealRecord(out, type, sequence);

/** A metadata or text field as stored: `{}` and '' are none (null). */
function field(value: Uint8Array | string | null | undefined): Uint8Array | string | null {
  if (value === null || value === undefined || value.length === 0) return null;
  const isEmptyObject = typeof value === 'string' ? value === '{}' : value.length === 2 && value[0] === 0x7b && value[1] === 0x7d;
  return isEmptyObject ? null : value;
}

/** Bytes an encoding copies or scans (fields, rows, its checksum) before it may yield (encodeRowsInSlices). */
const ENCODE_STEP_BYTES = 1024 * 1024;

/** Bytes an encoding has handled since it last could yield. */
class EncodeWork {
  private bytes = 0;

  /** Count `bytes` more; true when a step's worth has been done since the last true. */
  add(bytes: number): boolean {
    this.bytes += bytes;
    if (this.bytes < ENCODE_STEP_BYTES) return false;
    this.bytes = 0;
    return true;
  }
}

/**
 * A column of fields (ids, metadata or texts) as stored: their byte lengths,
 * and how to write them. A small column's strings go in one write of their
 * concatenation (hundreds of short ones cost far more written one by one),
 * gathered in a plain loop (Array.from of an array-like cost 7 us for 100 of
 * them); a column of more than a step is measured and written field by field.
 */
class Column {
  private constructor(
    readonly lengths: Uint32Array,
    readonly bytes: number,
    private readonly values: (Uint8Array | string | null)[],
    /** The fields concatenated, when all are strings and they take at most a step. */
    private readonly joined: string | null,
    private readonly ascii: boolean,
  ) {}

  static *of(count: number, fieldOf: (i: number) => Uint8Array | string | null, work: EncodeWork): Generator<void, Column, void> {
    const lengths = new Uint32Array(count);
    const values = new Array<Uint8Array | string | null>(count);
    let joined: string | null = '';
    let chars = 0;
    for (let i = 0; i < count; i++) {
      const value = fieldOf(i);
      values[i] = value;
      if (value !== null) chars += value.length;
      if (typeof value === 'string') joined = joined === null || chars > ENCODE_STEP_BYTES ? null : joined + value;
      else if (value !== null) joined = null;
    }
    // UTF-8 takes one byte a character exactly when every character is ASCII.
    const ascii = joined !== null && Buffer.byteLength(joined, 'utf8') === joined.length;
    let bytes = 0;
    for (let i = 0; i < count; i++) {
      const value = values[i];
      const n = value === null ? 0 : ascii || typeof value !== 'string' ? value.length : Buffer.byteLength(value, 'utf8');
      lengths[i] = n;
      bytes += n;
      if (work.add(n)) yield;
    }
    return new Column(lengths, bytes, values, joined, ascii);
  }

  /** Write the fields at `at`; where they end. */
  *write(out: Buffer, at: number, work: EncodeWork): Generator<void, number, void> {
    if (this.joined !== null) return at + out.write(this.joined, at, this.bytes, this.ascii ? 'latin1' : 'utf8');
    for (let i = 0; i < this.values.length; i++) {
      const value = this.values[i];
      if (value === null) continue;
      if (typeof value === 'string') out.write(value, at, this.lengths[i], 'utf8');
      else out.set(value, at);
      at += this.lengths[i];
      if (work.add(this.lengths[i])) yield;
    }
    return at;
  }
}

/** A buffer of `size` bytes at offset 0 of its ArrayBuffer (so the rows, at byte 56, are float32-aligned). */
export type Allocate = (size: number) => Buffer;

/** A buffer of its own: large enough for Buffer.allocUnsafeSlow to give it an ArrayBuffer of its own. */
const fresh: Allocate = (size) => Buffer.allocUnsafeSlow(size);

type RowsRecordHead = RowsHead & { t: 'upsert' | 'import'; part?: number; parts?: number };

/** An upsert or import part of `rows`, written straight into one buffer (rows and strings copied once). */
export function encodeRows(head: RowsRecordHead, rows: RowSource, sequence: number, allocate = fresh): Buffer {
  return runSteps(rowsEncoding(head, rows, sequence, allocate)).record;
}

/**
 * encodeRows giving the event loop back whenever `slices` says, between
 * steps of at most ENCODE_STEP_BYTES (an add-many of a 32 MiB body held it
 * 57 to 72 ms in one piece); with its payload's CRC-32, for sealing it again.
 */
export async function encodeRowsInSlices(
  head: RowsRecordHead,
  rows: RowSource,
  sequence: number,
  slices: Slices,
): Promise<{ record: Buffer; payloadCrc: number }> {
  return slices.run(rowsEncoding(head, rows, sequence, fresh));
}

/** How encodeRows makes a record, yielding after each step of work (its drivers decide whether to give the event loop back). */
function* rowsEncoding(
  head: RowsRecordHead,
  rows: RowSource,
  sequence: number,
  allocate: Allocate,
): Generator<void, { record: Buffer; payloadCrc: number }, void> {
  const work = new EncodeWork();
  const { count } = rows;
  const dim = head.dimensions;
  const ids = yield* Column.of(count, (i) => rows.id(i), work);
  const metadata = yield* Column.of(count, (i) => field(rows.metadata(i)), work);
  const textOf = rows.text;
  const text = textOf ? yield* Column.of(count, (i) => field(textOf(i)), work) : null;
  const columns = text ? [ids, metadata, text] : [ids, metadata];
  const rowsAt = RECORD_HEADER_BYTES + ROWS_HEAD_BYTES;
  const model = modelCode(head.embedding);
  let size = rowsAt + count * dim * 4 + model.name.length;
  for (const column of columns) size += column.lengths.byteLength + column.bytes;
  const ttlOf = rows.ttl;
  if (ttlOf) size += count * 16;
  const out = allocate(size);
  out.fill(0, 0, rowsAt);
  const h = RECORD_HEADER_BYTES;
  out.writeDoubleLE(head.at, h);
  out.writeUInt32LE(dim, h + 8);
  out.writeUInt32LE(count, h + 12);
  out.writeUInt8(METRICS.indexOf(head.metric), h + 16);
  out.writeUInt8(VECTOR_TYPES.indexOf(head.vectorType), h + 17);
  out.writeUInt8(head.analyzer ? ANALYZERS.indexOf(head.analyzer) + 1 : 0, h + 18);
  out.writeUInt8((text ? HAS_TEXT : 0) | (ttlOf ? HAS_TTL : 0), h + 19);
  out.writeUInt32LE(head.part ?? 0, h + 20);
  out.writeUInt32LE(head.parts ?? 1, h + 24);
  out.writeUInt8(model.code, h + 28);
  out.writeUInt8(model.name.length, h + 29);
  const values = LITTLE_ENDIAN ? new Float32Array(out.buffer, out.byteOffset + rowsAt, count * dim) : null;
  for (let i = 0; i < count; i++) {
    const v = rows.vector(i);
    if (v.length !== dim) throw new Error(`row ${i} has ${v.length} components, not ${dim}`);
    if (values) values.set(v, i * dim);
    else for (let j = 0; j < dim; j++) out.writeFloatLE(v[j], rowsAt + 4 * (i * dim + j));
    if (work.add(dim * 4)) yield;
  }
  let at = rowsAt + count * dim * 4;
  for (const column of columns) {
    if (LITTLE_ENDIAN) new Uint32Array(out.buffer, out.byteOffset + at, count).set(column.lengths);
    else for (let i = 0; i < count; i++) out.writeUInt32LE(column.lengths[i], at + 4 * i);
    at += 4 * count;
  }
  for (const column of columns) at = yield* column.write(out, at, work);
  out.set(model.name, at);
  at += model.name.length;
  if (ttlOf) {
    for (let i = 0; i < count; i++, at += 16) {
      const ttl = ttlOf(i);
      out.writeDoubleLE(ttl ? ttl.ttlMs : 0, at);
      out.writeDoubleLE(ttl ? ttl.expiresAt : 0, at + 8);
    }
  }
  // The payload's checksum a step at a time (CRC-32 continues from the value so far).
  let payloadCrc = 0;
  for (let from = RECORD_HEADER_BYTES; from < out.length; from += ENCODE_STEP_BYTES) {
    const to = Math.min(out.length, from + ENCODE_STEP_BYTES);
    payloadCrc = crc32(out.subarray(from, to), payloadCrc);
    if (to < out.length && work.add(to - from)) yield;
  }
  return { record: sealRecord(out, head.t, sequence, payloadCrc), payloadCrc };
}

export const EMBEDDING_NONE = 0;
export const EMBEDDING_BUILTIN = 1;
export const EMBEDDING_NAMED = 2;

/** How a head's embedding model is written: by name unless builtin, so a server restarted with another EMBEDDING_MODEL does not relabel the session. */
function modelCode(embedding: EmbeddingModel | null | undefined): { code: number; name: Uint8Array } {
  if (!embedding) return { code: EMBEDDING_NONE, name: new Uint8Array(0) };
  if (embedding === BUILTIN_EMBEDDING_MODEL) return { code: EMBEDDING_BUILTIN, name: new Uint8Array(0) };
  return { code: EMBEDDING_NAMED, name: Buffer.from(embedding, 'utf8') };
}

/** Any record (an upsert's rows through encodeRows). */
export function encodeRecordV2(record: RecordV2, sequence: number): Buffer {
  switch (record.t) {
    case 'upsert':
    case 'import': {
      const { rows, dimensions: dim } = record;
      return encodeRows(
        record,
        {
          count: record.ids.length,
          id: (i) => record.ids[i],
          vector: (i) => rows.subarray(i * dim, (i + 1) * dim),
          metadata: (i) => record.metadata[i],
          text: record.text ? (i) => record.text![i] : undefined,
          ttl: record.ttls ? (i) => record.ttls![i] : undefined,
        },
        sequence,
      );
    }
    case 'open': {
      const id = utf8.encode(record.sessionId);
      const out = Buffer.alloc(RECORD_HEADER_BYTES + 16 + id.length);
      out.writeDoubleLE(record.createdAt, RECORD_HEADER_BYTES);
      out.writeUInt32LE(id.length, RECORD_HEADER_BYTES + 8);
      out.set(id, RECORD_HEADER_BYTES + 16);
      return header(out, record.t, sequence);
    }
    case 'metadata': {
      const id = utf8.encode(record.id);
      const out = Buffer.alloc(RECORD_HEADER_BYTES + 16 + id.length + record.metadata.length);
      out.writeDoubleLE(record.at, RECORD_HEADER_BYTES);
      out.writeUInt32LE(id.length, RECORD_HEADER_BYTES + 8);
      out.writeUInt32LE(record.metadata.length, RECORD_HEADER_BYTES + 12);
      out.set(id, RECORD_HEADER_BYTES + 16);
      out.set(record.metadata, RECORD_HEADER_BYTES + 16 + id.length);
      return header(out, record.t, sequence);
    }
    case 'delete':
    case 'renew': {
      const ids = record.ids.map((id) => utf8.encode(id));
      const fixed = RECORD_HEADER_BYTES + 16 + 4 * ids.length;
      const expiries = record.t === 'renew' ? record.expiresAt : [];
      const out = Buffer.alloc(fixed + ids.reduce((n, id) => n + id.length, 0) + 8 * expiries.length);
      out.writeDoubleLE(record.at, RECORD_HEADER_BYTES);
      out.writeUInt32LE(ids.length, RECORD_HEADER_BYTES + 8);
      let at = fixed;
      ids.forEach((id, i) => {
        out.writeUInt32LE(id.length, RECORD_HEADER_BYTES + 16 + 4 * i);
        out.set(id, at);
        at += id.length;
      });
      for (const expiresAt of expiries) {
        out.writeDoubleLE(expiresAt, at);
        at += 8;
      }
      return header(out, record.t, sequence);
    }
    case 'synced': {
      const out = Buffer.alloc(RECORD_HEADER_BYTES + 8);
      out.writeDoubleLE(record.back, RECORD_HEADER_BYTES);
      return header(out, record.t, sequence);
    }
    default: {
      const out = Buffer.alloc(RECORD_HEADER_BYTES + 8);
      out.writeDoubleLE(record.at, RECORD_HEADER_BYTES);
      return header(out, record.t, sequence);
    }
  }
}
