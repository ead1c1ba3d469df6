// Decoding session log records, version 2 (the format: records-v2.ts).
import { ANALYZERS, BUILTIN_EMBEDDING_MODEL, EMBEDDING_MODEL_NAMES, EMBEDDING_MODELS, type EmbeddingModel, METRICS, VECTOR_TYPES } from '../../config.js';
import {
  CorruptLogError,
  EMBEDDING_BUILTIN,
  EMBEDDING_NONE,
  HAS_TEXT,
  HAS_TTL,
  LITTLE_ENDIAN,
  RECORD_HEADER_BYTES,
  recordHeader,
  ROWS_HEAD_BYTES,
  type RecordV2,
  type Rows,
  type RowsHead,
} from './records-v2.js';

import type { RowTtl } from '../../index/row-expiry.js';

const fromUtf8 = new TextDecoder();

/** Reads a payload field by field; a field past its end is damage the checksum did not catch (a bug, or a forged file). */
class Reader {
  constructor(
    private readonly bytes: Buffer,
    private at: number,
    private readonly end: number,
    private readonly copy: boolean,
  ) {}

  take(n: number): number {
    const at = this.at;
    if (n < 0 || at + n > this.end) throw new CorruptLogError(`a record's payload ends at byte ${this.end}, before its fields do`);
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
    return this.bytes[this.take(1)];
  }

  slice(n: number): Buffer {
    const at = this.take(n);
    return this.bytes.subarray(at, at + n);
  }

  lengths(count: number): number[] {
    const out = new Array<number>(count);
    for (let i = 0; i < count; i++) out[i] = this.u32();
    return out;
  }

  strings(lengths: number[]): string[] {
    return lengths.map((n) => fromUtf8.decode(this.slice(n)));
  }

  /** Copies, unless the caller is done with them before the bytes read are reused. */
  fields(lengths: number[]): (Uint8Array | null)[] {
    return lengths.map((n) => (n === 0 ? null : this.field(n)));
  }

  field(n: number): Uint8Array {
    const bytes = this.slice(n);
    return this.copy ? Uint8Array.from(bytes) : bytes;
  }

  /** `count` float32 values: a view when the bytes need no copy and are aligned for one, else a copy. */
  floats(count: number): Float32Array {
    const bytes = this.slice(count * 4);
    if (!this.copy && LITTLE_ENDIAN && (bytes.byteOffset & 3) === 0) return new Float32Array(bytes.buffer, bytes.byteOffset, count);
    const out = new Float32Array(count);
    new Uint8Array(out.buffer).set(bytes);
    if (!LITTLE_ENDIAN) for (let i = 0; i < count; i++) out[i] = bytes.readFloatLE(4 * i);
    return out;
  }

  /** `count` rows' ttl and expiry (ttlMs 0: none). */
  ttls(count: number): (RowTtl | null)[] {
    const out = new Array<RowTtl | null>(count);
    for (let i = 0; i < count; i++) {
      const ttlMs = this.f64();
      const expiresAt = this.f64();
      out[i] = ttlMs > 0 ? { ttlMs, expiresAt } : null;
    }
    return out;
  }

  done(): void {
    if (this.at !== this.end) throw new CorruptLogError(`a record's payload has ${this.end - this.at} bytes after its fields`);
  }
}

/**
 * The whole, checked record at `offset` (`size` bytes) of `bytes`. `copy`
 * false: rows and metadata may be views of `bytes`, for a caller done with
 * the record before those bytes are reused.
 */
export function decodeRecord(bytes: Buffer, offset: number, size: number, copy = true): RecordV2 {
  const type = recordHeader(bytes, offset).type;
  const r = new Reader(bytes, offset + RECORD_HEADER_BYTES, offset + size, copy);
  let record: RecordV2;
  switch (type) {
    case 'open': {
      const createdAt = r.f64();
      const length = r.u32();
      r.take(4);
      record = { t: 'open', createdAt, sessionId: fromUtf8.decode(r.slice(length)) };
      break;
    }
    case 'upsert':
    case 'import': {
      const at = r.f64();
      const dimensions = r.u32();
      const count = r.u32();
      const metric = METRICS[r.u8()];
      const vectorType = VECTOR_TYPES[r.u8()];
      const analyzerCode = r.u8();
      const flags = r.u8();
      const part = r.u32();
      const parts = r.u32();
      const embeddingCode = r.u8();
      const modelNameLength = r.u8();
      r.take(ROWS_HEAD_BYTES - 30);
      if (metric === undefined || vectorType === undefined || analyzerCode > ANALYZERS.length)
        throw new CorruptLogError('a record names an unknown metric, vector type or analyzer');
      const rows = r.floats(count * dimensions);
      const idLengths = r.lengths(count);
      const metadataLengths = r.lengths(count);
      const textLengths = flags & HAS_TEXT ? r.lengths(count) : null;
      const ids = r.strings(idLengths);
      const metadata = r.fields(metadataLengths);
      const text = textLengths ? r.fields(textLengths) : null;
      const modelName = fromUtf8.decode(r.slice(modelNameLength));
      const head: RowsHead & Rows = { at, dimensions, metric, vectorType, ids, rows, metadata, text };
      if (flags & HAS_TTL) head.ttls = r.ttls(count);
      if (analyzerCode > 0) head.analyzer = ANALYZERS[analyzerCode - 1];
      const embedding = embeddingModelOf(embeddingCode, modelName, dimensions);
      if (embedding) head.embedding = embedding;
      record = type === 'import' ? { t: 'import', part, parts, ...head } : { t: 'upsert', ...head };
      break;
    }
    case 'metadata': {
      const at = r.f64();
      const idLength = r.u32();
      const metadataLength = r.u32();
      record = { t: 'metadata', at, id: fromUtf8.decode(r.slice(idLength)), metadata: r.field(metadataLength) };
      break;
    }
    case 'delete': {
      const at = r.f64();
      const count = r.u32();
      r.take(4);
      record = { t: 'delete', at, ids: r.strings(r.lengths(count)) };
      break;
    }
    case 'renew': {
      const at = r.f64();
      const count = r.u32();
      r.take(4);
      const ids = r.strings(r.lengths(count));
      const expiresAt = new Array<number>(count);
      for (let i = 0; i < count; i++) expiresAt[i] = r.f64();
      record = { t: 'renew', at, ids, expiresAt };
      break;
    }
    case 'synced':
      record = { t: 'synced', back: r.f64() };
      break;
    case 'clear':
    case 'reset':
    case 'touch':
      record = { t: type, at: r.f64() };
      break;
    default:
      throw new CorruptLogError(`a record of unknown type ${bytes[offset + 4]}`);
  }
  r.done();
  return record;
}

/** The part and parts of the whole import record at `offset`. */
export function importPartAt(bytes: Buffer, offset: number): { part: number; parts: number } {
  const head = offset + RECORD_HEADER_BYTES;
  return { part: bytes.readUInt32LE(head + 20), parts: bytes.readUInt32LE(head + 24) };
}

/**
 * The model an upsert names, if this server knows it with the record's
 * dimension. One it no longer embeds with (EMBEDDING_URL or EMBEDDING_MODEL
 * changed since): the rows are kept, the session has no model. A log from
 * before names were written has code 2 and no name: the endpoint's
 * model. A name served now with another dimension is not the same model.
 */
function embeddingModelOf(code: number, name: string, dimensions: number): EmbeddingModel | null {
  if (code === EMBEDDING_NONE) return null;
  if (code === EMBEDDING_BUILTIN) return BUILTIN_EMBEDDING_MODEL;
  const spec = EMBEDDING_MODELS[name || EMBEDDING_MODEL_NAMES[code - 1]];
  return spec?.dimensions === dimensions ? spec.name : null;
}
