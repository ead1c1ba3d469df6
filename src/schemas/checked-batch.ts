// An add-many batch as the body reader (src/http/body/vector-reader.ts) hands
// it over: what the reader checked (each record's id a string of 1 to
// maxIdLength characters without a lone surrogate, the bounds of IdSchema, and its vector a
// Float32Array of valid components) apart from what it did not (any other
// field of a record, such as metadata, as JSON.parse made it).
// safeParseAddMany validates the rest through the add-many schemas
// (vectors.ts), so a field added to the record schema is checked on both paths.
import * as v from 'valibot';
import type { AnalyzerName, EmbeddingModel, Metric, VectorType } from '../config.js';
import type { VectorOutput } from './vector.js';

/** What the reader checked of a record. */
export interface CheckedRecord {
  readonly id: string;
  readonly vector: Float32Array;
}

export class CheckedBatch {
  /** The brand: no other value has this type (no code is emitted for it); at run time, `instanceof`, which JSON.parse cannot forge. */
  declare private readonly brand: never;

  /** Made by the body reader (and tests). */
  constructor(
    readonly records: CheckedRecord[],
    /** Each record's other fields, by index; undefined when no record has any. */
    readonly otherFields: readonly (Record<string, unknown> | undefined)[] | undefined,
  ) {}

  /** Record i as JSON.parse would make it (its vector a Float32Array). */
  recordAt(i: number): Record<string, unknown> {
    const { id, vector } = this.records[i];
    return { id, vector, ...this.otherFields?.[i] };
  }
}

/** A body whose `vectors` the body reader made. */
export function hasCheckedBatch(body: unknown): body is { vectors: CheckedBatch } {
  return typeof body === 'object' && body !== null && 'vectors' in body && body.vectors instanceof CheckedBatch;
}

interface SessionOptionsOutput {
  dimensions?: number;
  metric?: Metric;
  vectorType?: VectorType;
  analyzer?: AnalyzerName;
  embedding?: EmbeddingModel;
}
interface RecordOutput {
  id: string;
  /** Absent: the record is stored with the embedding of its text. */
  vector?: VectorOutput;
  metadata?: Record<string, unknown>;
  text?: string;
}
export interface AddManyOutput extends SessionOptionsOutput {
  vectors: RecordOutput[];
}
interface OtherFieldsOutput extends SessionOptionsOutput {
  vectors: Omit<RecordOutput, 'id' | 'vector'>[];
}

/** add-many's whole request, the same with each record less its id and vector, and the batch's length (vectors.ts, addManySchemas). */
export interface AddManySchemas {
  AddManyRequestSchema: v.GenericSchema<unknown, AddManyOutput>;
  AddManyOtherFieldsSchema: v.GenericSchema<unknown, OtherFieldsOutput>;
  AddManyLengthSchema: v.GenericSchema<unknown, unknown[]>;
}

export type AddManyResult = { success: true; output: AddManyOutput } | { success: false; issues: readonly v.BaseIssue<unknown>[] };

const NO_FIELDS: Readonly<Record<string, unknown>> = Object.freeze({});

/**
 * add-many's body: a plain JSON body through the whole schema; a body whose
 * `vectors` is a CheckedBatch through the schema of what the reader did not
 * check (the options, the batch's length and each record's other fields, at
 * their own paths: /vectors/1/metadata/...), its records then joined to their
 * ids and vectors. A batch without other fields takes the length and a
 * one-record batch of {}, whose verdict each of its records shares, before
 * any walk over its records; anything it refuses, the walk reports.
 */
export function safeParseAddMany(schemas: AddManySchemas, body: unknown): AddManyResult {
  if (!hasCheckedBatch(body)) return v.safeParse(schemas.AddManyRequestSchema, body);
  const { records, otherFields } = body.vectors;
  if (!otherFields && v.is(schemas.AddManyLengthSchema, records)) {
    const result = v.safeParse(schemas.AddManyOtherFieldsSchema, { ...body, vectors: [NO_FIELDS] });
    // Valid, and adding nothing to a record (no default): the records as they are.
    if (result.success && Object.keys(result.output.vectors[0]).length === 0) return { success: true, output: { ...result.output, vectors: records } };
  }
  const fields = records.map((_, i) => otherFields?.[i] ?? NO_FIELDS);
  const result = v.safeParse(schemas.AddManyOtherFieldsSchema, { ...body, vectors: fields });
  if (!result.success) return result;
  const vectors = result.output.vectors.map((other, i) => ({ ...other, id: records[i].id, vector: records[i].vector }));
  return { success: true, output: { ...result.output, vectors } };
}

/** Records whose other fields are checked in one step: a group of wide metadata is about a millisecond. */
const RECORDS_A_GROUP = 64;

/**
 * safeParseAddMany for a batch whose records have other fields (metadata, text), checked a group of
 * records at a time with `pause()` between groups (1,000 records of the widest metadata are tens of
 * ms in one step); the same verdict and issues, at the same paths, as safeParseAddMany.
 */
export async function safeParseAddManyInGroups(schemas: AddManySchemas, body: unknown, pause: () => Promise<void>): Promise<AddManyResult> {
  if (!hasCheckedBatch(body) || !body.vectors.otherFields || !v.is(schemas.AddManyLengthSchema, body.vectors.records)) return safeParseAddMany(schemas, body);
  const { records, otherFields } = body.vectors;
  // The records' issues in order, then the first group's others (options, keys): the whole batch's order.
  const issues: v.BaseIssue<unknown>[] = [];
  const batchIssues: v.BaseIssue<unknown>[] = [];
  const others: OtherFieldsOutput['vectors'] = [];
  let options: SessionOptionsOutput = {};
  for (let from = 0; from < records.length; from += RECORDS_A_GROUP) {
    if (from > 0) await pause();
    const group = otherFields.slice(from, from + RECORDS_A_GROUP).map((fields) => fields ?? NO_FIELDS);
    const result = v.safeParse(schemas.AddManyOtherFieldsSchema, { ...body, vectors: group });
    if (result.success) {
      const { vectors, ...sessionOptions } = result.output;
      options = sessionOptions;
      others.push(...vectors);
    } else {
      for (const issue of result.issues) {
        if (issue.path?.[0]?.key === 'vectors') issues.push(shiftedIssue(issue, from));
        else if (from === 0) batchIssues.push(issue);
      }
    }
  }
  issues.push(...batchIssues);
  if (issues.length > 0) return { success: false, issues: issues as [v.BaseIssue<unknown>, ...v.BaseIssue<unknown>[]] };
  const vectors = others.map((other, i) => ({ ...other, id: records[i].id, vector: records[i].vector }));
  return { success: true, output: { ...options, vectors } };
}

/** An issue of a group that starts at record `from`, at its path in the whole batch (/vectors/<from + i>/...). */
function shiftedIssue(issue: v.BaseIssue<unknown>, from: number): v.BaseIssue<unknown> {
  const [first, second, ...rest] = issue.path ?? [];
  if (typeof second?.key !== 'number') return issue;
  return { ...issue, path: [first, { ...second, key: second.key + from }, ...rest] as typeof issue.path };
}
