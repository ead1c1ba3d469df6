// The `vectors` of an add-many body whose records the body reader
// (src/http/vector-json.ts) found plain: each exactly { id: string, vector }
// with the vector a Float32Array it checked as VectorSchema would. Such a
// batch is validated with one loop over the ids instead of valibot's object
// pipeline per record (a new output object each, about a fifth of the
// server's own work on a base64 batch); anything else, and any batch that
// loop does not accept, goes through the declared schema and its issues.
import * as v from 'valibot';

/** Record arrays the body reader built and found plain (branded by identity, so nothing else is trusted). */
const plainBatches = new WeakSet<readonly unknown[]>();

export function markPlainRecords(records: readonly unknown[]): void {
  plainBatches.add(records);
}

/** Whether the body reader built `value` and found its records plain. */
export function isPlainRecords(value: unknown): boolean {
  return Array.isArray(value) && plainBatches.has(value);
}

/** Levels a plain batch spans: the array, its records, their vectors. */
export const PLAIN_RECORDS_DEPTH = 3;

type Dataset = { value: unknown; typed?: boolean; issues?: unknown };

/**
 * `schema` (the pipe of the `vectors` array: records, then min and max
 * length) with a fast path for plain batches: ids within 1..maxIdLength,
 * 1..maxBatch records; the output is the input array itself.
 */
export function withPlainRecords<S extends v.GenericSchema>(schema: S, maxIdLength: number, maxBatch: number): S {
  const declaredRun = schema['~run'].bind(schema);
  (schema as { '~run': unknown })['~run'] = (dataset: Dataset, config: v.Config<v.BaseIssue<unknown>>) => {
    const input = dataset.value;
    if (Array.isArray(input) && plainBatches.has(input) && input.length >= 1 && input.length <= maxBatch && idsFit(input, maxIdLength)) {
      return { typed: true, value: input };
    }
    return declaredRun(dataset as never, config);
  };
  return schema;
}

function idsFit(records: readonly { id: string }[], maxIdLength: number): boolean {
  for (let i = 0; i < records.length; i++) {
    const { length } = records[i].id;
    if (length < 1 || length > maxIdLength) return false;
  }
  return true;
}
