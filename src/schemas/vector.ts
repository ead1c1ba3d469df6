// The schema of a vector in a request (`vector`, `queryVector`, each of
// `queryVectors`): a JSON array of numbers, or a base64 string of
// little-endian float32. Published (OpenAPI) as the union of the two.
//
// Validating a batch of 1000 x 384 numbers through valibot's generic array
// pipeline costs about as much as JSON.parse of the body, so the union's run
// is replaced by a single typed loop for the common case (a valid input).
// Anything that loop does not accept goes through the declared schemas,
// which produce the usual issues with their paths (e.g. /vector/3).
import * as v from 'valibot';
import { SPEC_LIMITS } from '../config.js';
import { base64Length, BASE64_PATTERN, decodeFloat32Base64 } from './base64-float32.js';

const MAX_ABS = SPEC_LIMITS.maxAbsComponent;
const MAX_DIMS = SPEC_LIMITS.maxDimensions;

export const ComponentSchema = v.pipe(v.number(), v.finite(), v.minValue(-MAX_ABS), v.maxValue(MAX_ABS));

export const NumberVectorSchema = v.pipe(
  v.array(ComponentSchema),
  v.minLength(1),
  v.maxLength(MAX_DIMS),
  v.description('Vector components as JSON numbers, stored as float32.'),
);

/** All components finite and within bounds, 1 to maxDimensions of them. */
export function validComponents(values: ArrayLike<unknown>): boolean {
  if (values.length < 1 || values.length > MAX_DIMS) return false;
  for (let i = 0; i < values.length; i++) {
    const x = values[i];
    if (typeof x !== 'number' || !(x >= -MAX_ABS && x <= MAX_ABS)) return false;
  }
  return true;
}

const decodesToVector = (text: string) => {
  const values = decodeFloat32Base64(text);
  return values !== null && validComponents(values);
};

export const Base64VectorSchema = v.pipe(
  v.string(),
  v.regex(BASE64_PATTERN, 'must be standard padded base64'),
  v.maxLength(base64Length(MAX_DIMS)),
  v.check(decodesToVector, `must decode to 1 to ${MAX_DIMS} little-endian float32 values, each finite and within ±${MAX_ABS}`),
  v.description(`Vector components as base64 of little-endian float32 (4 bytes each, 1 to ${MAX_DIMS} of them); much faster to send and parse than JSON numbers.`),
);

type VectorOutput = number[] | Float32Array;

/**
 * Buffers of the server's own JSON reader (src/http/vector-json.ts), whose
 * Float32Array views hold vectors it checked as this schema would: such a
 * view is accepted as it is. A Float32Array from anywhere else is refused.
 * (Branded by buffer, not by view: a batch shares a few buffers.)
 */
const checkedBuffers = new WeakSet<ArrayBufferLike>();

export function markCheckedBuffer(buffer: ArrayBufferLike): void {
  checkedBuffers.add(buffer);
}
type Dataset = { value: unknown; typed?: boolean; issues?: unknown };

function fastVectorSchema() {
  const union = v.union([NumberVectorSchema, Base64VectorSchema]);
  const declaredRun = union['~run'].bind(union);
  // Same acceptance as the declared union, one loop for valid input; a
  // base64 string comes out decoded (a Float32Array).
  (union as { '~run': unknown })['~run'] = (dataset: Dataset, config: v.Config<v.BaseIssue<unknown>>) => {
    const input = dataset.value;
    if (input instanceof Float32Array && checkedBuffers.has(input.buffer)) return { typed: true, value: input };
    if (Array.isArray(input)) {
      if (validComponents(input)) return { typed: true, value: input };
      return NumberVectorSchema['~run'](dataset as never, config);
    }
    if (typeof input === 'string') {
      const values = input.length <= base64Length(MAX_DIMS) ? decodeFloat32Base64(input) : null;
      if (values && validComponents(values)) return { typed: true, value: values };
      return Base64VectorSchema['~run'](dataset as never, config);
    }
    return declaredRun(dataset as never, config);
  };
  return union as unknown as v.GenericSchema<number[] | string, VectorOutput>;
}

export const VectorSchema = fastVectorSchema();
