// The reader of add, add-many, search and search-many bodies: each `vector`,
// `queryVector` and item of `queryVectors` goes straight into a Float32Array
// (JSON numbers parsed by json-number.ts, base64 decoded by the kernel)
// instead of JSON.parse making a JS number per component. Everything else
// (ids, metadata, options) is JSON.parse'd slice by slice, so it comes out
// exactly as JSON.parse makes it. This module is the grammar of such a
// body; its tokens come from json-scanner.ts, and its vectors go to a
// vector-sink.ts of its own.
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
import { loadConfig, SPEC_LIMITS } from '../../config.js';
import { hasLoneSurrogate } from '../../index/json-size.js';
import { Slices } from '../../limits/slices.js';
import { CheckedBatch, type CheckedRecord } from '../../schemas/checked-batch.js';
import { readFloat32 } from './json-number.js';
import { CLOSE_ARRAY, CLOSE_OBJECT, COLON, COMMA, DECLINE, JsonScanner, OPEN_ARRAY, OPEN_OBJECT, QUOTE } from './json-scanner.js';
import type { BufferLease } from './spare-buffers.js';
import { VectorSink } from './vector-sink.js';
import type { WasmBodyBuffer } from './wasm-body-buffer.js';

const MAX_ABS = SPEC_LIMITS.maxAbsComponent;
const MAX_DIMS = SPEC_LIMITS.maxDimensions;

let defaultMaxIdLength: number | undefined;
/** The id length limit of the default configuration, read on first use (tests and benches read bodies without a config). */
const maxIdLengthByDefault = () => (defaultMaxIdLength ??= loadConfig({}).maxIdLength);

/** The grammar of a vector body over a scanner (tokens), readFloat32 (numbers) and a sink (where vectors go). */
class VectorBodyReader {
  readonly scanner: JsonScanner;
  readonly sink: VectorSink;

  constructor(
    bytes: Buffer,
    lease: BufferLease | undefined,
    wasmBuffer: WasmBodyBuffer | undefined,
    private readonly maxIdLength: number,
  ) {
    this.scanner = new JsonScanner(bytes);
    this.sink = new VectorSink(bytes, lease, wasmBuffer, MAX_DIMS);
  }

  /** The whole body, as JSON.parse reads an object, pausing (a `yield`) inside its long arrays. */
  *body(): Generator<void, Record<string, unknown>> {
    const { scanner } = this;
    scanner.expect(OPEN_OBJECT);
    const out: Record<string, unknown> = {};
    if (scanner.peek() === CLOSE_OBJECT) {
      scanner.pos++;
    } else {
      do {
        if (scanner.peek() !== QUOTE) throw DECLINE;
        const key = scanner.string();
        // Assigning "__proto__" would set the prototype; JSON.parse makes it a plain key.
        if (key === '__proto__') throw DECLINE;
        scanner.expect(COLON);
        // A repeated key keeps its first position and its last value, as with JSON.parse.
        out[key] = yield* this.topLevelValue(key);
      } while (!scanner.atClose(CLOSE_OBJECT));
    }
    scanner.skipSpace();
    if (!scanner.done) throw DECLINE;
    return out;
  }

  /** A top-level value of the body: vectors and queryVectors with pauses between items. */
  private *topLevelValue(key: string): Generator<void, unknown> {
    if (key === 'vectors' && this.scanner.peek() === OPEN_ARRAY) return yield* this.batch();
    if (key === 'queryVectors' && this.scanner.peek() === OPEN_ARRAY) return yield* this.pausingArray(() => this.vector());
    return this.field(key);
  }

  /**
   * The records of add-many's `vectors`: each an object like object(field),
   * without a closure per record (`"id"` and `"vector"` keys are matched on
   * their bytes, not sliced into new strings), whose id and vector pass the
   * checks of a CheckedBatch; any other field is kept apart.
   */
  private *batch(): Generator<void, CheckedBatch> {
    const { scanner } = this;
    const records: CheckedRecord[] = [];
    let otherFields: (Record<string, unknown> | undefined)[] | undefined;
    const record = () => {
      let id: unknown;
      let vector: unknown;
      let fields: Record<string, unknown> | undefined;
      scanner.expect(OPEN_OBJECT);
      do {
        if (scanner.peek() !== QUOTE) throw DECLINE;
        const key = scanner.key();
        scanner.expect(COLON);
        // A repeated key keeps its last value, as with JSON.parse.
        if (key === 'id') id = this.field(key);
        else if (key === 'vector') vector = this.field(key);
        else {
          fields ??= {};
          fields[key] = this.field(key);
        }
      } while (!scanner.atClose(CLOSE_OBJECT));
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

  /** `[ item, ... ]` with at least one item, pausing after each: the long arrays of a body, vectors and queryVectors. */
  private *pausingArray(item: () => unknown): Generator<void, unknown[]> {
    this.scanner.expect(OPEN_ARRAY);
    const out: unknown[] = [];
    for (;;) {
      out.push(item());
      if (this.scanner.atClose(CLOSE_ARRAY)) return out;
      yield;
    }
  }

  /** A field of a record of add-many, or of the body of add or search: vectors read into float32, a string id as is, the rest by JSON.parse. */
  private field(key: string): unknown {
    if (key === 'vector' || key === 'queryVector') return this.vector();
    if (key === 'id' && this.scanner.peek() === QUOTE) return this.scanner.string();
    return this.scanner.jsonValue();
  }

  /** `vector`: a number array or a base64 string becomes a checked Float32Array; any other value is left to the schema. */
  private vector(): unknown {
    const { scanner } = this;
    const first = scanner.peek();
    if (first === QUOTE) {
      const end = scanner.rawStringEnd();
      const values = this.sink.base64(scanner.pos + 1, end);
      scanner.pos = end + 1;
      return values;
    }
    if (first !== OPEN_ARRAY) return scanner.jsonValue();
    scanner.pos++;
    const components = this.sink.components;
    let n = 0;
    for (;;) {
      if (n === MAX_DIMS) throw DECLINE;
      components[n++] = readFloat32(scanner, MAX_ABS);
      // atClose() by hand, and no space skipped in compact JSON: this loop runs for every component.
      let next = scanner.bytes[scanner.pos];
      if (next !== COMMA && next !== CLOSE_ARRAY) next = scanner.peek();
      scanner.pos++;
      if (next === CLOSE_ARRAY) break;
      if (next !== COMMA) throw DECLINE;
    }
    return this.sink.take(n, scanner.pos);
  }
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
  maxIdLength = maxIdLengthByDefault(),
): Record<string, unknown> | undefined {
  // No check of the whole body for non-ASCII bytes: every string is made
  // from ASCII bytes only (string(), jsonValue()), and anywhere else such a
  // byte is not JSON structure, a digit or base64, so the reader declines.
  const parse = parseSteps(new VectorBodyReader(bytes, lease, wasmBuffer, maxIdLength));
  for (;;) {
    const step = parse.next();
    if (step.done) return step.value;
  }
}

/** The parse of a body, a step between two records or query vectors: its value, or undefined when the reader declines. */
function* parseSteps(reader: VectorBodyReader): Generator<void, Record<string, unknown> | undefined> {
  try {
    const parse = reader.body();
    for (let step = parse.next(); ; step = parse.next()) {
      if (step.done) {
        reader.sink.settle();
        return step.value;
      }
      yield;
    }
  } catch (err) {
    if (err === DECLINE) return undefined;
    throw err;
  } finally {
    reader.sink.abandon();
  }
}

/**
 * readVectorBody in slices: between two records or query vectors, once
 * `slices` says its slice is used up, it gives the event loop a turn (other
 * requests then run, with base64 decoders of their own: this parse's is
 * settled first). The same result, or undefined, as readVectorBody.
 */
export async function readVectorBodySliced(
  bytes: Buffer,
  lease?: BufferLease,
  wasmBuffer?: WasmBodyBuffer,
  maxIdLength = maxIdLengthByDefault(),
  slices = new Slices(),
): Promise<Record<string, unknown> | undefined> {
  const reader = new VectorBodyReader(bytes, lease, wasmBuffer, maxIdLength);
  const parse = parseSteps(reader);
  for (let step = parse.next(); ; step = parse.next()) {
    if (step.done) return step.value;
    if (slices.due()) {
      reader.sink.settle();
      await slices.pause();
    }
  }
}
