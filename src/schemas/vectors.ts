// Request bodies of the /vectors/* routes.
import * as v from 'valibot';
import type { Config } from '../config.js';
import { EXPORT_FORMAT, EXPORT_VERSION } from '../export/format.js';
import { commonSchemas, DimensionsSchema, MetricSchema, VectorSchema, VectorTypeSchema } from './common.js';
import { withPlainRecords } from './plain-records.js';

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
    /** A vector line of an import (add-many's record). */
    ImportRecordSchema: VectorRecordSchema,
    /** The first line of an import (src/export/format.ts). */
    ImportHeaderSchema: v.strictObject({
      format: v.literal(EXPORT_FORMAT),
      version: v.literal(EXPORT_VERSION),
      dimensions: v.nullable(DimensionsSchema),
      metric: v.nullable(MetricSchema),
      vectorType: VectorTypeSchema,
      count: v.pipe(v.number(), v.integer(), v.minValue(0), v.maxValue(config.maxVectorsPerSession)),
    }),
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
