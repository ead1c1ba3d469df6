// The reader of add, add-many, search and search-many bodies: each `vector`,
// `queryVector` and item of `queryVectors` goes straight into a Float32Array
// (JSON numbers parsed here, base64 decoded by the kernel, base64-decoder.ts)
// instead of JSON.parse making a JS number per component. Everything else
// (ids, metadata, options) is JSON.parse'd slice by slice, so it comes out
// exactly as JSON.parse makes it.
//
// A large body is parsed in slices (readVectorBodySliced): the reader gives
// the event loop back between two records or query vectors once it has run
// for SLICE_MS, so a 20 MB add-many does not hold the main thread for the
// 100+ ms one pass takes. Text between those points is handled whole.
//
// An add-many batch (`vectors`) comes out as a CheckedBatch
// (src/schemas/checked-batch.ts): records of a string id of 1 to maxIdLength
// characters (well-formed UTF-16) and a checked vector each, their other fields as JSON.parse
// makes them, for the route to validate through the schema.
//
// It only takes the easy road: on anything it does not handle (non-ASCII
// bytes, a "__proto__" key, a component out of range, malformed JSON, a
// record it cannot check...) it declines (undefined) and the caller parses
// the body the ordinary way, which reports whatever is wrong.
import { isAscii } from 'node:buffer';
import { endianness } from 'node:os';
import { loadConfig, SPEC_LIMITS } from '../../config.js';
import { hasLoneSurrogate } from '../../index/json-size.js';
import { Slices } from '../../limits/slices.js';
import { base64Length } from '../../schemas/base64-float32.js';
import { CheckedBatch, type CheckedRecord } from '../../schemas/checked-batch.js';
import type { BufferLease } from './spare-buffers.js';
import { base64Decoder, type Base64Decoder } from './base64-decoder.js';
import type { WasmBodyBuffer } from './wasm-body-buffer.js';

const MAX_ABS = SPEC_LIMITS.maxAbsComponent;
const MAX_DIMS = SPEC_LIMITS.maxDimensions;

/** The id length limit of the default configuration (tests and benches read bodies without a config). */
const DEFAULT_MAX_ID_LENGTH = loadConfig({}).maxIdLength;

/** Strict UTF-8 of a value's bytes; a BOM is kept (and then refused by JSON.parse), as in a whole body's text. */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** Thrown inside the parser to give up; never escapes readVectorBody. */
const DECLINE = Symbol('decline');
/**
 * Nesting of one value (metadata, a filter) past which the reader declines:
 * JSON.parse of a value a million levels deep takes seconds, and the whole-body
 * path refuses it from a scan of its bytes first (depth.ts). Above any
 * MAX_JSON_DEPTH in use, so an allowed value is never declined for it.
 */
const MAX_VALUE_DEPTH = 64;

const LITTLE_ENDIAN = endianness() === 'LE';

const QUOTE = 0x22;
const EQUALS = 0x3d;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;

/** 10^0 .. 10^22: exactly representable doubles. */
const POW10 = Array.from({ length: 23 }, (_, i) => Number(`1e${i}`));
/** Relative error bound of the fast decimal conversion (at most ~7e-16, see toNumber), with a wide margin. */
const EPSILON = 1e-13;

/** Floats per arena block: vectors of a body are views into a few shared blocks, not one buffer each. */
const ARENA_FLOATS = 64 * 1024;

/** One vector's components while they are read (a sliced parse yields only between vectors, so one buffer serves all). */
const SCRATCH = new Float32Array(MAX_DIMS);

class Reader {
  pos = 0;
  private arena = new Float32Array(0);
  private arenaUsed = 0;
  /** Set on the first base64 vector: begun for this body, flushed by readVectorBody. */
  decoder: Base64Decoder | undefined;

  /** The WasmBodyBuffer the body was read into, if any: its base64 vectors are decoded in place. */
  private readonly wasmBuffer: WasmBodyBuffer | undefined;

  constructor(
    private readonly bytes: Buffer,
    private readonly lease: BufferLease | undefined,
    wasmBuffer: WasmBodyBuffer | undefined,
    private readonly maxIdLength: number,
  ) {
    this.wasmBuffer = wasmBuffer?.holds(bytes) ? wasmBuffer : undefined;
  }

  get done(): boolean {
    return this.pos >= this.bytes.length;
  }

  skipSpace(): void {
    const { bytes } = this;
    let c = bytes[this.pos];
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = bytes[++this.pos];
  }

  peek(): number {
    this.skipSpace();
    return this.bytes[this.pos];
  }

  expect(byte: number): void {
    if (this.peek() !== byte) throw DECLINE;
    this.pos++;
  }

  /**
   * The records of add-many's `vectors`: each an object like object(field),
   * without a closure per record (`"id"` and `"vector"` keys are matched on
   * their bytes, not sliced into new strings), whose id and vector pass the
   * checks of a CheckedBatch; any other field is kept apart.
   */
  *batch(): Generator<void, CheckedBatch> {
    const records: CheckedRecord[] = [];
    let otherFields: (Record<string, unknown> | undefined)[] | undefined;
    const record = () => {
      let id: unknown;
      let vector: unknown;
      let fields: Record<string, unknown> | undefined;
      this.expect(OPEN_OBJECT);
      for (;;) {
        if (this.peek() !== QUOTE) throw DECLINE;
        const key = this.key();
        this.expect(COLON);
        // A repeated key keeps its last value, as with JSON.parse.
        if (key === 'id') id = this.field(key);
        else if (key === 'vector') vector = this.field(key);
        else {
          fields ??= {};
          fields[key] = this.field(key);
        }
        const next = this.peek();
        this.pos++;
        if (next === CLOSE_OBJECT) break;
        if (next !== COMMA) throw DECLINE;
      }
      if (typeof id !== 'string' || id.length < 1 || id.length > this.maxIdLength || !(vector instanceof Float32Array)) throw DECLINE;
      // A lone surrogate (only a JSON escape makes one): the schema refuses it.
      if (hasLoneSurrogate(id)) throw DECLINE;
      if (fields) otherFields ??= new Array(records.length).fill(undefined);
      otherFields?.push(fields);
      records.push({ id, vector });
    };
    yield* this.pausingArray(record);
    return new CheckedBatch(records, otherFields);
  }

  /** A key at a quote: the common ones without a new string; "__proto__" declines. */
  private key(): string {
    const { bytes, pos } = this;
    if (bytes[pos + 1] === 0x69 && bytes[pos + 2] === 0x64 && bytes[pos + 3] === QUOTE) {
      this.pos = pos + 4;
      return 'id';
    }
    if (
      bytes[pos + 7] === QUOTE &&
      bytes[pos + 1] === 0x76 &&
      bytes[pos + 2] === 0x65 &&
      bytes[pos + 3] === 0x63 &&
      bytes[pos + 4] === 0x74 &&
      bytes[pos + 5] === 0x6f &&
      bytes[pos + 6] === 0x72
    ) {
      this.pos = pos + 8;
      return 'vector';
    }
    const key = this.string();
    // Assigning "__proto__" would set the prototype; JSON.parse makes it a plain key.
    if (key === '__proto__') throw DECLINE;
    return key;
  }

  /** A field of a record of add-many, or of the body of add or search: vectors read into float32, a string id as is, the rest by JSON.parse. */
  field(key: string): unknown {
    if (key === 'vector' || key === 'queryVector') return this.vector();
    if (key === 'id' && this.peek() === QUOTE) return this.string();
    return this.jsonValue();
  }

  /** `[ item, ... ]` with at least one item, pausing (a `yield`) after each: the long arrays of a body, vectors and queryVectors. */
  *pausingArray(item: () => unknown): Generator<void, unknown[]> {
    this.expect(OPEN_ARRAY);
    const out: unknown[] = [];
    for (;;) {
      out.push(item());
      const next = this.peek();
      this.pos++;
      if (next === CLOSE_ARRAY) return out;
      if (next !== COMMA) throw DECLINE;
      yield;
    }
  }

  /** An ASCII string without escapes as is, anything else through jsonValue(). */
  string(): string {
    const { bytes } = this;
    const start = this.pos;
    let i = start + 1;
    for (;;) {
      const c = bytes[i];
      if (c === QUOTE) break;
      // Escapes, control characters and non-ASCII bytes: JSON.parse's slice (which declines non-ASCII).
      if (c === BACKSLASH || c === undefined || c < 0x20 || c >= 0x80) return this.jsonValue() as string;
      i++;
    }
    this.pos = i + 1;
    return latin1(bytes, start + 1, i);
  }

  /** Any JSON value, parsed by JSON.parse from its own bytes (strict UTF-8, as parse-json.ts reads a whole body). */
  jsonValue(): unknown {
    this.skipSpace();
    const start = this.pos;
    this.pos = endOfValue(this.bytes, start);
    const slice = this.bytes.subarray(start, this.pos);
    try {
      // A value starts and ends at ASCII bytes, so its text is the same slice of the whole body's text.
      return JSON.parse(isAscii(slice) ? latin1(this.bytes, start, this.pos) : utf8.decode(slice));
    } catch {
      throw DECLINE;
    }
  }

  /** `vector`: a number array or a base64 string becomes a checked Float32Array; any other value is left to the schema. */
  vector(): unknown {
    const first = this.peek();
    if (first === QUOTE) return this.base64Vector();
    if (first !== OPEN_ARRAY) return this.jsonValue();
    this.pos++;
    const scratch = SCRATCH;
    let n = 0;
    for (;;) {
      if (n === MAX_DIMS) throw DECLINE;
      scratch[n++] = this.component();
      const next = this.peek();
      this.pos++;
      if (next === CLOSE_ARRAY) break;
      if (next !== COMMA) throw DECLINE;
    }
    const values = this.allocate(n);
    values.set(scratch.subarray(0, n));
    return values;
  }

  /** A checked vector of n floats, carved from the current arena block. */
  private allocate(n: number, base64 = false): Float32Array {
    if (this.arenaUsed + n > this.arena.length) {
      const left = this.bytes.length - this.pos;
      // A JSON component takes at least 2 bytes of the body ("0,"), so a
      // small body gets a small block. Base64 takes 16 bytes per 3 floats:
      // one block holds every base64 vector left (at most 0.75 bytes per
      // body byte), so a batch is one allocation, not one per 256 KB.
      const size = base64 ? Math.floor((left * 3) / 16) : Math.min(ARENA_FLOATS, left >> 1);
      const floats = Math.max(n, size);
      const buffer = this.lease ? this.lease.take(floats * 4) : new ArrayBuffer(floats * 4);
      this.arena = new Float32Array(buffer, 0, floats);
      this.arenaUsed = 0;
    }
    const values = this.arena.subarray(this.arenaUsed, this.arenaUsed + n);
    this.arenaUsed += n;
    return values;
  }

  /**
   * A base64 vector decoded straight into its Float32Array. Accepted only when
   * every character decodes (so the JSON string holds no escape or control
   * character and equals its bytes) and the values pass the vector schema.
   * The values are in place once readVectorBody flushes the decoder.
   */
  private base64Vector(): unknown {
    const { bytes } = this;
    const start = this.pos + 1;
    const end = bytes.indexOf(QUOTE, start);
    if (end < 0 || !LITTLE_ENDIAN) throw DECLINE;
    const length = end - start;
    if (length % 4 !== 0 || length > base64Length(MAX_DIMS) || bytes[end - 3] === EQUALS) throw DECLINE;
    const expected = (length / 4) * 3 - (bytes[end - 1] === EQUALS ? (bytes[end - 2] === EQUALS ? 2 : 1) : 0);
    if (expected % 4 !== 0) throw DECLINE;
    if (expected === 0 || expected > MAX_DIMS * 4) throw DECLINE;
    // In place when the body sits in a WasmBodyBuffer (wasm-body-buffer.ts) with room left.
    const placed = this.wasmBuffer?.decode(start, end) ?? null;
    if (placed !== null) {
      // A number: a character outside the alphabet, padding inside the text or a value out of range.
      if (typeof placed === 'number' || placed.length !== expected / 4) throw DECLINE;
      this.pos = end + 1;
      return placed;
    }
    const values = this.allocate(expected / 4, true);
    if (!this.decoder) {
      this.decoder = base64Decoder();
      this.decoder.reset();
    }
    // Negative for a character outside the alphabet, padding inside the text or a value out of range.
    if (this.decoder.decode(bytes, start, end, this.arena, this.arenaUsed - values.length) !== values.length) throw DECLINE;
    this.pos = end + 1;
    return values;
  }

  /** One JSON number within ±maxAbsComponent, rounded to float32 as JSON.parse then a Float32Array would. */
  private component(): number {
    this.skipSpace();
    const { bytes } = this;
    const start = this.pos;
    let i = start;
    const negative = bytes[i] === MINUS;
    if (negative) i++;
    let mantissa = 0;
    let digits = 0;
    let c = bytes[i];
    if (c === ZERO) {
      c = bytes[++i];
    } else if (c > ZERO && c <= NINE) {
      while (c >= ZERO && c <= NINE) {
        mantissa = mantissa * 10 + (c - ZERO);
        digits++;
        c = bytes[++i];
      }
    } else {
      throw DECLINE;
    }
    let exponent = 0;
    if (c === DOT) {
      c = bytes[++i];
      if (!(c >= ZERO && c <= NINE)) throw DECLINE;
      while (c >= ZERO && c <= NINE) {
        // Leading zeros of a fraction are not significant digits.
        if (digits > 0 || c !== ZERO) digits++;
        mantissa = mantissa * 10 + (c - ZERO);
        exponent--;
        c = bytes[++i];
      }
    }
    if (c === 0x65 || c === 0x45) {
      c = bytes[++i];
      const expNegative = c === MINUS;
      if (c === MINUS || c === PLUS) c = bytes[++i];
      if (!(c >= ZERO && c <= NINE)) throw DECLINE;
      let e = 0;
      while (c >= ZERO && c <= NINE) {
        e = Math.min(e * 10 + (c - ZERO), 100_000);
        c = bytes[++i];
      }
      exponent += expNegative ? -e : e;
    }
    this.pos = i;
    const value = toFloat32(negative, mantissa, digits, exponent) ?? exactFloat32(bytes, start, i);
    if (value === null) throw DECLINE;
    return value;
  }
}

/**
 * Clinger's fast path, widened to float32: with at most 19 significant
 * digits the mantissa carries at most 4 roundings and the power of ten
 * (exact up to 1e22) one more, so the result is within 7e-16 of the decimal.
 * When float32 rounding of everything within EPSILON of it agrees, that is
 * the float32 of the correctly rounded double too (rounding is monotonic).
 * Otherwise (or near the range limit) null: the caller converts exactly.
 */
function toFloat32(negative: boolean, mantissa: number, digits: number, exponent: number): number | null {
  if (digits > 19 || exponent > 22 || exponent < -22) return null;
  const magnitude = exponent >= 0 ? mantissa * POW10[exponent] : mantissa / POW10[-exponent];
  const f = Math.fround(magnitude);
  if (Math.fround(magnitude * (1 - EPSILON)) !== f || Math.fround(magnitude * (1 + EPSILON)) !== f) return null;
  if (magnitude * (1 + EPSILON) > MAX_ABS) return null;
  return negative ? -f : f;
}

/** The exact conversion (JSON.parse's own), for the rare number the fast path cannot settle; null when out of range. */
function exactFloat32(bytes: Buffer, start: number, end: number): number | null {
  const value = Number(latin1(bytes, start, end));
  if (!(value >= -MAX_ABS && value <= MAX_ABS)) return null;
  return Math.fround(value);
}

/** Buffer's own latin1 slicer (what toString('latin1') calls after checking its arguments). */
type Latin1Slicer = { latin1Slice(start: number, end: number): string };
const HAS_LATIN1_SLICE = typeof (Buffer.prototype as Partial<Latin1Slicer>).latin1Slice === 'function';

/** bytes [start, end) as a string; the callers pass bounds within the buffer. */
function latin1(bytes: Buffer, start: number, end: number): string {
  // Called for every id and base64 vector: toString's argument handling costs more than the copy.
  return HAS_LATIN1_SLICE ? (bytes as unknown as Latin1Slicer).latin1Slice(start, end) : bytes.toString('latin1', start, end);
}

/**
 * Index just past the JSON value starting at `start` (strings, nesting and
 * scalars; not a validation: JSON.parse checks the slice).
 */
function endOfValue(bytes: Buffer, start: number): number {
  let depth = 0;
  // Past this the caller's whole-body path scans the nesting before JSON.parse builds it (depth.ts).
  const deepest = MAX_VALUE_DEPTH;
  let i = start;
  for (;;) {
    const c = bytes[i];
    if (c === undefined) throw DECLINE;
    if (c === QUOTE) {
      i++;
      for (;;) {
        const s = bytes[i];
        if (s === undefined) throw DECLINE;
        i++;
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > deepest) throw DECLINE;
      i++;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      if (depth === 0) return i;
      depth--;
      i++;
    } else if (depth === 0 && (c === COMMA || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09)) {
      return i;
    } else {
      i++;
    }
    if (depth === 0 && (c === QUOTE || c === CLOSE_ARRAY || c === CLOSE_OBJECT)) return i;
  }
}

/** A top-level value of the body: vectors and queryVectors with pauses between items. */
function* topLevelValue(reader: Reader, key: string): Generator<void, unknown> {
  if (key === 'vectors' && reader.peek() === OPEN_ARRAY) return yield* reader.batch();
  if (key === 'queryVectors' && reader.peek() === OPEN_ARRAY) return yield* reader.pausingArray(() => reader.vector());
  return reader.field(key);
}

/** The whole body, as Reader.object() reads an object, pausing inside its long arrays. */
function* topLevel(reader: Reader): Generator<void, Record<string, unknown>> {
  reader.expect(OPEN_OBJECT);
  const out: Record<string, unknown> = {};
  if (reader.peek() === CLOSE_OBJECT) {
    reader.pos++;
  } else {
    for (;;) {
      if (reader.peek() !== QUOTE) throw DECLINE;
      const key = reader.string();
      // Assigning "__proto__" would set the prototype; JSON.parse makes it a plain key.
      if (key === '__proto__') throw DECLINE;
      reader.expect(COLON);
      // A repeated key keeps its first position and its last value, as with JSON.parse.
      out[key] = yield* topLevelValue(reader, key);
      const next = reader.peek();
      reader.pos++;
      if (next === CLOSE_OBJECT) break;
      if (next !== COMMA) throw DECLINE;
    }
  }
  reader.skipSpace();
  if (!reader.done) throw DECLINE;
  return out;
}

/**
 * The body of /vectors/add, add-many, /search or search-many, parsed as
 * JSON.parse would except that vectors (number arrays and base64) are
 * checked Float32Arrays; undefined when this parser declines the body (the
 * caller then uses JSON.parse). With a lease, the vectors live in buffers
 * taken from its pool; with the WasmBodyBuffer the body was read into, base64
 * vectors live in it: give either back only once nothing will read
 * them. In one piece: readVectorBodySliced is the same parse in slices.
 */
export function readVectorBody(
  bytes: Buffer,
  lease?: BufferLease,
  wasmBuffer?: WasmBodyBuffer,
  maxIdLength = DEFAULT_MAX_ID_LENGTH,
): Record<string, unknown> | undefined {
  // No check of the whole body for non-ASCII bytes: every string is made
  // from ASCII bytes only (string(), jsonValue()), and anywhere else such a
  // byte is not JSON structure, a digit or base64, so the reader declines.
  const parse = parseSteps(new Reader(bytes, lease, wasmBuffer, maxIdLength));
  for (;;) {
    const step = parse.next();
    if (step.done) return step.value;
  }
}

/** The parse of a body, a step between two records or query vectors: its value, or undefined when the reader declines. */
function* parseSteps(reader: Reader): Generator<void, Record<string, unknown> | undefined> {
  try {
    const parse = topLevel(reader);
    for (let step = parse.next(); ; step = parse.next()) {
      if (step.done) {
        reader.decoder?.flush();
        return step.value;
      }
      yield;
    }
  } catch (err) {
    if (err === DECLINE) return undefined;
    throw err;
  } finally {
    reader.decoder?.reset();
  }
}

/**
 * readVectorBody in slices: between two records or query vectors, once
 * `slices` says its slice is used up, it gives the event loop a turn (other
 * requests then run, and may use the shared base64 decoder: its pending
 * values are flushed first). The same result, or undefined, as readVectorBody.
 */
export async function readVectorBodySliced(
  bytes: Buffer,
  lease?: BufferLease,
  wasmBuffer?: WasmBodyBuffer,
  maxIdLength = DEFAULT_MAX_ID_LENGTH,
  slices = new Slices(),
): Promise<Record<string, unknown> | undefined> {
  const reader = new Reader(bytes, lease, wasmBuffer, maxIdLength);
  const parse = parseSteps(reader);
  for (let step = parse.next(); ; step = parse.next()) {
    if (step.done) return step.value;
    if (slices.due()) {
      reader.decoder?.flush();
      reader.decoder?.reset();
      await slices.pause();
    }
  }
}
