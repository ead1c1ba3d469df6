// The schema of a vector in a request (`vector`, `queryVector`, each of
// `queryVectors`): a JSON array of numbers, or a base64 string of
// little-endian float32. Published (OpenAPI) as the union of the two; valid
// input takes the checks of checked-vectors.ts, anything else the declared
// schema of its kind, whose issues carry their paths (e.g. /vector/3).
import * as v from 'valibot';
import { SPEC_LIMITS } from '../config.js';
import { base64Length, BASE64_PATTERN, decodeFloat32Base64 } from './base64-float32.js';
import { decodeValidBase64, isCheckedVector, isValidNumberVector, validComponents } from './checked-vectors.js';

export { markCheckedBuffer, validComponents } from './checked-vectors.js';

const MAX_ABS = SPEC_LIMITS.maxAbsComponent;
const MAX_DIMS = SPEC_LIMITS.maxDimensions;

export const ComponentSchema = v.pipe(v.number(), v.finite(), v.minValue(-MAX_ABS), v.maxValue(MAX_ABS));

export const NumberVectorSchema = v.pipe(
  v.array(ComponentSchema),
  v.minLength(1),
  v.maxLength(MAX_DIMS),
  v.description('Vector components as JSON numbers, stored as float32.'),
);

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

/** What is published and what reports the issues of input of no known kind. */
const DeclaredVectorSchema = v.union([NumberVectorSchema, Base64VectorSchema]);

const CheckedVectorSchema = v.custom<Float32Array>(isCheckedVector);
const ValidNumberVectorSchema = v.custom<number[]>(isValidNumberVector);
/** A base64 vector comes out decoded. */
const ValidBase64VectorSchema = v.pipe(v.string(), v.transform((text) => decodeValidBase64(text) as Float32Array));

type VectorOutput = number[] | Float32Array;

function vectorSchemaFor(input: unknown): v.GenericSchema<unknown, VectorOutput> {
  if (isCheckedVector(input)) return CheckedVectorSchema;
  if (Array.isArray(input)) return isValidNumberVector(input) ? ValidNumberVectorSchema : NumberVectorSchema;
  if (typeof input === 'string') return decodeValidBase64(input) !== null ? ValidBase64VectorSchema : Base64VectorSchema as never;
  return DeclaredVectorSchema as never;
}

export const VectorSchema = v.lazy(vectorSchemaFor) as unknown as v.GenericSchema<number[] | string, VectorOutput>;
