// Building blocks of every response: the session object, the metrics object
// and the error body. Objects are strict (additionalProperties: false in the
// OpenAPI document), so a field a route starts sending without a schema here
// fails the conformance test (test/openapi/responses.test.ts).
import * as v from 'valibot';
import { ANALYZERS, BACKENDS, EMBEDDING_MODEL_NAMES, METRICS, SPEC_LIMITS, VECTOR_TYPES } from '../config.js';
import { ERROR_CODES, type ErrorCode } from '../errors.js';

export const CountSchema = v.pipe(v.number(), v.integer(), v.minValue(0));
const MsSchema = v.pipe(v.number(), v.minValue(0), v.description('Milliseconds.'));
export const TimestampSchema = v.pipe(v.string(), v.isoTimestamp(), v.description('ISO 8601 time (UTC).'));

/** Any JSON object (metadata, filters and error details as sent back). */
export const JsonObjectSchema = v.record(v.string(), v.unknown());

export const SessionSchema = v.pipe(
  v.strictObject({
    sessionId: v.pipe(v.string(), v.uuid()),
    createdAt: TimestampSchema,
    updatedAt: TimestampSchema,
    lastAccessedAt: TimestampSchema,
    expiresAt: TimestampSchema,
    ttlMsRemaining: MsSchema,
    initialized: v.pipe(v.boolean(), v.description('False until the first add, and again after POST /index/reset.')),
    vectorCount: CountSchema,
    maxVectors: CountSchema,
    config: v.strictObject({
      dimensions: v.nullable(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(SPEC_LIMITS.maxDimensions))),
      metric: v.nullable(v.picklist(METRICS)),
      vectorType: v.picklist(VECTOR_TYPES),
      backend: v.pipe(v.picklist(BACKENDS), v.description("The kernel build that answers this session's searches (KERNEL_BUILD).")),
      analyzer: v.pipe(
        v.nullable(v.picklist(ANALYZERS)),
        v.description('How texts become terms for keyword search; null until an add names one or carries text, and again after POST /index/reset.'),
      ),
      embedding: v.pipe(
        v.nullable(v.picklist(EMBEDDING_MODEL_NAMES)),
        v.description(
          "The model that embeds the session's texts (records with text and no vector, queries {text}); fixed with the dimension and metric by the first add that embeds or names one, null for a session whose vectors were given, and again after POST /index/reset.",
        ),
      ),
    }),
  }),
  v.description('The session of the token, after any change the request made.'),
);

/**
 * The `metrics` object: requestLatencyMs plus the route's own fields. On a
 * success every field is present; an error carries the ones measured before it.
 */
export function metricsSchema(fields: readonly string[], presence: 'required' | 'optional') {
  const entries: Record<string, v.GenericSchema> = { requestLatencyMs: MsSchema };
  for (const field of fields) {
    // A field named with a trailing '?' is there only when its step ran (embedMs: a request with texts to embed).
    const name = field.replace(/\?$/, '');
    const schema = name.endsWith('Ms') ? MsSchema : CountSchema;
    entries[name] = presence === 'required' && name === field ? schema : v.optional(schema);
  }
  return v.pipe(v.strictObject(entries), v.description('Server-side timings of this request (also in the Server-Timing header).'));
}

/** Error codes grouped by HTTP status. */
export function codesByStatus(codes: readonly ErrorCode[]): Map<number, ErrorCode[]> {
  const groups = new Map<number, ErrorCode[]>();
  for (const code of codes) {
    const status = ERROR_CODES[code];
    groups.set(status, [...(groups.get(status) ?? []), code]);
  }
  return groups;
}

/** The error body, with `code` restricted to `codes`. */
export function errorResponseSchema(codes: readonly ErrorCode[], metricFields: readonly string[] = []) {
  return v.strictObject({
    success: v.literal(false),
    error: v.strictObject({
      code: v.pipe(v.picklist(codes as [ErrorCode, ...ErrorCode[]]), v.description('Stable machine-readable error code.')),
      message: v.pipe(v.string(), v.description('Human-readable explanation.')),
      details: v.optional(
        v.pipe(JsonObjectSchema, v.description('Context such as the JSON Pointer `path` of the offending field, `expected`, `actual`, `limit`.')),
      ),
    }),
    metrics: metricsSchema(metricFields, 'optional'),
  });
}
