// The trusted fast path, outside valibot: vectors and add-many batches that
// the body reader (src/http/body/vector-reader.ts) built and checked are
// recognised here by identity, and plain vectors are checked with one typed
// loop. The schemas (vector.ts, vectors.ts) dispatch here through v.lazy and
// fall back to their declared pipes, which report every issue with its path.
import { SPEC_LIMITS } from '../config.js';
import { base64Length, decodeFloat32Base64 } from './base64-float32.js';

const MAX_ABS = SPEC_LIMITS.maxAbsComponent;
const MAX_DIMS = SPEC_LIMITS.maxDimensions;

/** Buffers whose Float32Array views hold vectors the reader checked (by buffer: a batch shares a few). */
const checkedBuffers = new WeakSet<ArrayBufferLike>();

/** Record arrays the reader built and found plain: each exactly { id: string, vector: checked Float32Array }. */
const plainBatches = new WeakSet<readonly unknown[]>();

/** Levels a plain batch spans: the array, its records, their vectors. */
export const PLAIN_RECORDS_DEPTH = 3;

export function markCheckedBuffer(buffer: ArrayBufferLike): void {
  checkedBuffers.add(buffer);
}

/** A Float32Array over a buffer the reader checked (any other Float32Array is refused by the schema). */
export function isCheckedVector(value: unknown): value is Float32Array {
  return value instanceof Float32Array && checkedBuffers.has(value.buffer);
}

/** All components finite and within bounds, 1 to maxDimensions of them. */
export function validComponents(values: ArrayLike<unknown>): boolean {
  if (values.length < 1 || values.length > MAX_DIMS) return false;
  for (let i = 0; i < values.length; i++) {
    const x = values[i];
    if (typeof x !== 'number' || !(x >= -MAX_ABS && x <= MAX_ABS)) return false;
  }
  return true;
}

/** A JSON number array the vector schema accepts. */
export function isValidNumberVector(value: unknown): value is number[] {
  return Array.isArray(value) && validComponents(value);
}

/** The floats of a base64 vector the schema accepts, else null. */
export function decodeValidBase64(text: string): Float32Array | null {
  const values = text.length <= base64Length(MAX_DIMS) ? decodeFloat32Base64(text) : null;
  return values && validComponents(values) ? values : null;
}

export function markPlainRecords(records: readonly unknown[]): void {
  plainBatches.add(records);
}

/** Whether the reader built `value` and found its records plain. */
export function isPlainRecords(value: unknown): value is { id: string; vector: Float32Array }[] {
  return Array.isArray(value) && plainBatches.has(value);
}

/** A plain batch of 1..maxBatch records whose ids are 1..maxIdLength long: valid as it is. */
export function isValidPlainBatch(value: unknown, maxIdLength: number, maxBatch: number): boolean {
  if (!isPlainRecords(value) || value.length < 1 || value.length > maxBatch) return false;
  for (let i = 0; i < value.length; i++) {
    const { length } = value[i].id;
    if (length < 1 || length > maxIdLength) return false;
  }
  return true;
}
