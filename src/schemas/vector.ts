// The schema of a vector in a request (`vector`, `queryVector`, each of
// `queryVectors`): a JSON array of numbers, or a base64 string of
// little-endian float32. Published (OpenAPI) as the union of the two; valid
// input takes the one-loop checks of checked-vectors.ts, anything else the
// declared schema of its kind, whose issues carry their paths (e.g.
// /vector/3). A Float32Array (what the body reader makes of either) gets the
// same checks.
import * as v from 'valibot';
import { SPEC_LIMITS } from '../config.js';
import { utf8Length } from '../index/json-size.js';
import { base64Length, BASE64_PATTERN, decodeFloat32Base64 } from './base64-float32.js';
import { decodeValidBase64, isValidNumberVector, validComponents } from './checked-vectors.js';

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
  v.description(
    `Vector components as base64 of little-endian float32 (4 bytes each, 1 to ${MAX_DIMS} of them); much faster to send and parse than JSON numbers.`,
  ),
);

/** What is published and what reports the issues of input of no known kind. */
const DeclaredVectorSchema = v.union([NumberVectorSchema, Base64VectorSchema]);

const Float32VectorSchema = v.pipe(
  v.instance(Float32Array),
  v.check((values) => validComponents(values), `must hold 1 to ${MAX_DIMS} values, each finite and within ±${MAX_ABS}`),
);
const ValidNumberVectorSchema = v.custom<number[]>(isValidNumberVector);
/** A base64 vector comes out decoded. */
const ValidBase64VectorSchema = v.pipe(
  v.string(),
  v.transform((text) => decodeValidBase64(text) as Float32Array),
);
/** Text that is not a valid base64 vector: the declared checks report it (the transform never runs). */
const InvalidBase64VectorSchema = v.pipe(
  Base64VectorSchema,
  v.transform((text) => decodeValidBase64(text) as Float32Array),
);

export type VectorOutput = number[] | Float32Array;

function vectorSchemaFor(input: unknown): v.GenericSchema<unknown, VectorOutput> {
  if (input instanceof Float32Array) return Float32VectorSchema;
  if (Array.isArray(input)) return isValidNumberVector(input) ? ValidNumberVectorSchema : NumberVectorSchema;
  if (typeof input === 'string') return decodeValidBase64(input) !== null ? ValidBase64VectorSchema : InvalidBase64VectorSchema;
  // Input of no known kind, which it refuses (it never outputs a string); also what OpenAPI publishes (getter(undefined)).
  return DeclaredVectorSchema as never;
}

export const VectorSchema = v.lazy(vectorSchemaFor);

/** A query by text (`queryVector: {"text": ...}`, an item of `queryVectors`): searched by the embedding of its text under the session's model. */
export const TextQuerySchema = v.strictObject({
  text: v.pipe(
    v.string(),
    v.minLength(1, 'a query text to embed must not be empty'),
    v.check((text) => utf8Length(text) <= SPEC_LIMITS.maxQueryTextBytes, `must be at most ${SPEC_LIMITS.maxQueryTextBytes} bytes as UTF-8`),
    v.description(
      `Searched by the embedding of this text under the session's model (config.embedding; a session without one answers 400 NO_EMBEDDING_MODEL). At most ${SPEC_LIMITS.maxQueryTextBytes} bytes; the model reads its first 128 tokens.`,
    ),
  ),
});
export type TextQuery = v.InferOutput<typeof TextQuerySchema>;
export type QueryOutput = VectorOutput | TextQuery;

const DeclaredQueryVectorSchema = v.union([NumberVectorSchema, Base64VectorSchema, TextQuerySchema]);

function queryVectorSchemaFor(input: unknown): v.GenericSchema<unknown, QueryOutput> {
  if (input === undefined) return DeclaredQueryVectorSchema as never;
  return typeof input === 'object' && input !== null && !Array.isArray(input) && !(input instanceof Float32Array) ? TextQuerySchema : vectorSchemaFor(input);
}

/** A query vector, or a query by text ({"text": ...}). */
export const QueryVectorSchema = v.lazy(queryVectorSchemaFor);

export const isTextQuery = (query: QueryOutput): query is TextQuery => !Array.isArray(query) && !(query instanceof Float32Array);
