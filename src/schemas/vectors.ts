// Request bodies of the /vectors/* routes.
import * as v from 'valibot';
import { SPEC_LIMITS, type Config } from '../config.js';
import { EXPORT_FORMAT, EXPORT_VERSION, VECTOR_ENCODINGS } from '../export/format.js';
import { TimestampSchema } from './envelope.js';
import { exactlyOne } from './exactly-one.js';
import { AnalyzerSchema, commonSchemas, EmbeddingSchema, DimensionsSchema, MetricSchema, VectorSchema, VectorTypeSchema } from './common.js';
import type { VectorOutput } from './vector.js';

/** Fields that configure a new session; checked against a locked one. */
const sessionOptions = {
  dimensions: v.optional(DimensionsSchema),
  metric: v.optional(MetricSchema),
  vectorType: v.optional(VectorTypeSchema),
  analyzer: v.optional(AnalyzerSchema),
  embedding: v.optional(EmbeddingSchema),
};

const IncludeTextSchema = v.optional(v.pipe(v.boolean(), v.description("Return each vector's text (null for a vector without one).")), false);

/** The entries every vector record has (a test may add more). */
type RecordEntries = v.ObjectEntries & { id: v.GenericSchema<unknown, string>; vector: v.GenericSchema<unknown, VectorOutput | undefined> };

/**
 * add-many's request for a record schema; the same with each record less the
 * id and vector the body reader checks when it builds the batch; and the
 * batch's length alone (checked-batch.ts, safeParseAddMany).
 */
export function addManySchemas<TEntries extends RecordEntries>(record: v.StrictObjectSchema<TEntries, undefined>, maxBatch: number) {
  const batchOf = <TRecord extends v.GenericSchema>(item: TRecord) => v.pipe(v.array(item), v.minLength(1), v.maxLength(maxBatch));
  return {
    AddManyRequestSchema: v.strictObject({ vectors: batchOf(record), ...sessionOptions }),
    AddManyOtherFieldsSchema: v.strictObject({ vectors: batchOf(v.omit(record, ['id', 'vector'])), ...sessionOptions }),
    /** batchOf's bounds without a look at any record. */
    AddManyLengthSchema: v.pipe(v.custom<unknown[]>(Array.isArray), v.minLength(1), v.maxLength(maxBatch)),
  };
}

export const VectorEncodingSchema = v.pipe(
  v.picklist(VECTOR_ENCODINGS),
  v.description('How vectors are written: numbers (JSON numbers, each float32 exactly) or base64 (of little-endian float32; smaller and much faster).'),
);

/** A metadata field path, as filters name fields. */
const FieldPathSchema = v.pipe(v.string(), v.minLength(1), v.maxLength(SPEC_LIMITS.maxFieldPathLength));

const FacetRangeSchema = v.pipe(
  v.strictObject({ gte: v.optional(v.number()), lt: v.optional(v.number()) }),
  v.check((range) => range.gte !== undefined || range.lt !== undefined, 'a range needs gte, lt or both'),
  v.check((range) => range.gte === undefined || range.lt === undefined || range.gte < range.lt, 'gte must be below lt'),
);

const OrderBySchema = v.pipe(
  v.strictObject({
    path: v.pipe(FieldPathSchema, v.description('The metadata field to order by ("a.b" reaches nested objects).')),
    direction: v.optional(v.picklist(['asc', 'desc']), 'asc'),
  }),
  v.description(
    'Order by a metadata value instead of insertion order: numbers, then strings (by Unicode code point; ISO-8601 dates written alike order as dates), desc reversing it; ties in insertion order; rows without such a value (missing, booleans, null, objects, strings past maxIndexedValueBytes) last, in insertion order. An array takes its least element (asc) or greatest (desc).',
  ),
);

export function vectorSchemas(config: Config) {
  const { IdSchema, MetadataSchema, FilterSchema, TextSchema } = commonSchemas(config);
  const NonEmptyFilterSchema = v.pipe(
    FilterSchema,
    v.check((filter) => Object.keys(filter).length > 0, 'must not be empty (POST /vectors/clear removes every vector)'),
  );

  const IdRequestSchema = v.strictObject({ id: IdSchema });
  const IdsRequestSchema = (cap: number) =>
    v.strictObject({
      ids: v.pipe(v.array(IdSchema), v.minLength(1), v.maxLength(cap)),
    });
  const ReadRequestSchema = v.strictObject({ id: IdSchema, includeText: IncludeTextSchema });

  const TtlMsSchema = v.pipe(
    v.number(),
    v.integer(),
    v.minValue(1),
    v.maxValue(config.maxRecordTtlMs),
    v.description(
      `Per-record TTL: the record expires this many milliseconds after this write (or a touch); none: it never does, and a replace without ttlMs clears an earlier one. At most ${config.maxRecordTtlMs} (MAX_RECORD_TTL_MS); a record never outlives its session.`,
    ),
  );

  /** A record of add, add-many and an import: without a vector, it is stored with the embedding of its text (the session's model). */
  const VectorRecordSchema = v.strictObject({
    id: IdSchema,
    vector: v.optional(
      v.pipe(VectorSchema, v.description("Without one, the record is stored with the embedding of its text under the session's model (config.embedding).")),
    ),
    metadata: v.optional(MetadataSchema),
    text: v.optional(TextSchema),
    ttlMs: v.optional(TtlMsSchema),
  });

  return {
    /** A vector line of an import (add-many's record). */
    ImportRecordSchema: v.strictObject({
      ...VectorRecordSchema.entries,
      expiresAt: v.optional(
        v.pipe(
          TimestampSchema,
          v.description('With ttlMs: the instant the record expires (an export writes it), at most ttlMs from the import; without it, ttlMs from the import.'),
        ),
      ),
    }),
    /** The first line of an import (src/export/format.ts). */
    ImportHeaderSchema: v.strictObject({
      format: v.literal(EXPORT_FORMAT),
      version: v.literal(EXPORT_VERSION),
      dimensions: v.nullable(DimensionsSchema),
      metric: v.nullable(MetricSchema),
      vectorType: VectorTypeSchema,
      analyzer: v.optional(v.nullable(AnalyzerSchema)),
      embedding: v.optional(v.nullable(EmbeddingSchema)),
      count: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(config.maxVectorsPerSession)),
    }),
    HasRequestSchema: IdRequestSchema,
    GetRequestSchema: ReadRequestSchema,
    DeleteRequestSchema: IdRequestSchema,
    /** POST /vectors/touch: ids per call as get-many's (MAX_GET_MANY_BATCH). */
    TouchRequestSchema: IdsRequestSchema(config.maxGetManyBatch),
    GetMetadataRequestSchema: IdRequestSchema,
    DeleteMetadataRequestSchema: IdRequestSchema,
    GetManyRequestSchema: v.strictObject({ ...IdsRequestSchema(config.maxGetManyBatch).entries, includeText: IncludeTextSchema }),
    DeleteManyRequestSchema: v.pipe(
      v.strictObject({
        ids: v.optional(IdsRequestSchema(config.maxDeleteManyBatch).entries.ids),
        filter: v.optional(
          v.pipe(NonEmptyFilterSchema, v.description('Delete every vector this filter matches (the filter language of /search), in one atomic step.')),
        ),
      }),
      exactlyOne(['ids', 'filter']),
    ),
    ExportQuerySchema: v.strictObject({ vectorEncoding: v.optional(VectorEncodingSchema, 'numbers') }),
    CountRequestSchema: v.strictObject({ filter: v.optional(FilterSchema) }),
    FacetRequestSchema: v.strictObject({
      path: v.pipe(FieldPathSchema, v.description('The metadata field whose values are counted ("a.b" reaches nested objects and arrays of objects).')),
      filter: v.optional(FilterSchema),
      limit: v.optional(
        v.pipe(
          v.number(),
          v.integer(),
          v.minValue(SPEC_LIMITS.minFacetLimit),
          v.maxValue(SPEC_LIMITS.maxFacetLimit),
          v.description('Values answered, the most counted first.'),
        ),
        SPEC_LIMITS.defaultFacetLimit,
      ),
      ranges: v.optional(
        v.pipe(
          v.array(FacetRangeSchema),
          v.minLength(1),
          v.maxLength(SPEC_LIMITS.maxFacetRanges),
          v.description('Numeric buckets: each counts the rows holding a number x with gte <= x < lt (a bound left out is open).'),
        ),
      ),
    }),
    ListRequestSchema: v.strictObject({
      filter: v.optional(FilterSchema),
      limit: v.optional(
        v.pipe(v.number(), v.integer(), v.minValue(SPEC_LIMITS.minListLimit), v.maxValue(SPEC_LIMITS.maxListLimit), v.description('Vectors per page.')),
        SPEC_LIMITS.defaultListLimit,
      ),
      cursor: v.optional(
        v.pipe(
          v.string(),
          v.maxLength(SPEC_LIMITS.maxListCursorLength),
          v.description('nextCursor of the previous page (opaque; of a listing with the same orderBy); none starts at the first vector.'),
        ),
      ),
      orderBy: v.optional(OrderBySchema),
      includeVectors: v.optional(v.boolean(), false),
      includeMetadata: v.optional(v.boolean(), false),
      includeText: IncludeTextSchema,
      vectorEncoding: v.optional(VectorEncodingSchema, 'numbers'),
    }),
    PatchMetadataRequestSchema: v.strictObject({
      id: IdSchema,
      patch: v.pipe(
        MetadataSchema,
        v.description(
          'RFC 7396 JSON Merge Patch: objects merge recursively, null removes a key, any other value replaces it. The result must meet the metadata limits.',
        ),
      ),
    }),
    /** The metadata a patch produces: held to the limits of metadata/set. */
    PatchedMetadataSchema: MetadataSchema,
    SetMetadataRequestSchema: v.strictObject({ id: IdSchema, metadata: MetadataSchema }),
    AddRequestSchema: v.strictObject({ ...VectorRecordSchema.entries, ...sessionOptions }),
    ...addManySchemas(VectorRecordSchema, config.maxAddManyBatch),
  };
}
