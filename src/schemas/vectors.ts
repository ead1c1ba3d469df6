// Request bodies of the /vectors/* routes.
import * as v from 'valibot';
import type { Config } from '../config.js';
import { commonSchemas, DimensionsSchema, MetricSchema, VectorSchema, VectorTypeSchema } from './common.js';
import { isPlainRecords, isValidPlainBatch } from './checked-vectors.js';

/**
 * `schema` (the pipe of the `vectors` array) taking a batch that
 * isValidPlainBatch accepts as it is, without valibot's object pipeline per record.
 */
function withPlainRecords<S extends v.GenericSchema>(schema: S, maxIdLength: number, maxBatch: number): S {
  const PlainBatchSchema = v.custom<v.InferOutput<S>>(isPlainRecords);
  return v.lazy((input) => (isValidPlainBatch(input, maxIdLength, maxBatch) ? PlainBatchSchema : schema)) as unknown as S;
}

export function vectorSchemas(config: Config) {
  const { IdSchema, MetadataSchema } = commonSchemas(config);

  const IdRequestSchema = v.strictObject({ id: IdSchema });
  const IdsRequestSchema = (cap: number) => v.strictObject({
    ids: v.pipe(v.array(IdSchema), v.minLength(1), v.maxLength(cap)),
  });

  const VectorRecordSchema = v.strictObject({
    id: IdSchema,
    vector: VectorSchema,
    metadata: v.optional(MetadataSchema),
  });

  /** Fields that configure a new session; checked against a locked one. */
  const sessionOptions = {
    dimensions: v.optional(DimensionsSchema),
    metric: v.optional(MetricSchema),
    vectorType: v.optional(VectorTypeSchema),
  };

  return {
    HasRequestSchema: IdRequestSchema,
    GetRequestSchema: IdRequestSchema,
    DeleteRequestSchema: IdRequestSchema,
    GetMetadataRequestSchema: IdRequestSchema,
    DeleteMetadataRequestSchema: IdRequestSchema,
    GetManyRequestSchema: IdsRequestSchema(config.maxGetManyBatch),
    DeleteManyRequestSchema: IdsRequestSchema(config.maxDeleteManyBatch),
    SetMetadataRequestSchema: v.strictObject({ id: IdSchema, metadata: MetadataSchema }),
    AddRequestSchema: v.strictObject({ ...VectorRecordSchema.entries, ...sessionOptions }),
    AddManyRequestSchema: v.strictObject({
      vectors: withPlainRecords(
        v.pipe(v.array(VectorRecordSchema), v.minLength(1), v.maxLength(config.maxAddManyBatch)),
        config.maxIdLength,
        config.maxAddManyBatch,
      ),
      ...sessionOptions,
    }),
  };
}
