// Text records and text queries for LocalIndex, before they reach the shared
// change and search code: each text becomes its vector by the embedding
// model. The index's config lock fixes the model by its first add that embeds
// or names it (`embedding: 'use-lite-512'`), which means 512 dimensions and
// cosine (checked here first); a text query in an index without one is refused.
import { MODEL_NAME } from '../embedding/model-files.js';
import { MODEL } from '../embedding/weights.js';
import { TempvecError } from './errors.js';
import type * as t from './types.js';

export type AnyRecord = t.VectorRecord | t.TextRecord;

export const isTextRecord = (r: AnyRecord): r is t.TextRecord => r?.vector === undefined;
export const isTextQuery = (q: t.Vector | t.TextQuery): q is t.TextQuery =>
  typeof (q as t.TextQuery)?.text === 'string' && (q as t.Vector).length === undefined;

/** Whether an add needs the model: a record without a vector, or `embedding` named. */
export const needsModel = (records: readonly AnyRecord[], options: t.SessionOptions) => options.embedding !== undefined || records.some(isTextRecord);

const invalid = (message: string, path: string) => new TempvecError(400, 'VALIDATION_ERROR', message, { issues: [{ path, message }] });

/** The add's options for the model (cosine), refusing a model, metric or dimension it cannot have. */
export function modelOptions({ embedding, ...options }: t.SessionOptions): Omit<t.SessionOptions, 'embedding'> {
  if (embedding !== undefined && embedding !== MODEL_NAME) throw invalid(`embedding must be "${MODEL_NAME}", the builtin model`, '/embedding');
  if (options.metric !== undefined && options.metric !== 'cosine')
    throw invalid(`the embedding model's vectors are compared by cosine, not ${options.metric}`, '/metric');
  if (options.dimensions !== undefined && options.dimensions !== MODEL.width)
    throw invalid(`the embedding model's vectors have ${MODEL.width} dimensions, not ${options.dimensions}`, '/dimensions');
  return { ...options, metric: 'cosine' };
}

/** The options of an add that needs no model, as the request schemas take them (no embedding key at all). */
export function sessionOptions({ embedding, ...options }: t.SessionOptions): Omit<t.SessionOptions, 'embedding'> {
  return options;
}

/** The texts to embed of records without vectors (each a non-empty string), by record index. */
export function textsOf(records: readonly AnyRecord[], path: (i: number) => string): Map<number, string> {
  const texts = new Map<number, string>();
  records.forEach((r, i) => {
    if (!isTextRecord(r)) return;
    if (typeof r.text !== 'string' || r.text.length === 0) throw invalid('a record without a vector needs a non-empty text to embed', `${path(i)}/text`);
    texts.set(i, r.text);
  });
  return texts;
}

/** The records with each text record's vector filled in. */
export function withVectors(records: readonly AnyRecord[], texts: Map<number, string>, vectors: Float32Array[]): t.VectorRecord[] {
  const at = [...texts.keys()];
  const out = records.map((r) => r as t.VectorRecord);
  at.forEach((i, k) => {
    out[i] = { ...records[i], vector: vectors[k] } as t.VectorRecord;
  });
  return out;
}

/** A text query where the index has no model: what to do instead. */
export function noModelError(): TempvecError {
  return invalid(
    `this index has no embedding model, so a text cannot be a query vector: add a record with text and no vector, or pass { embedding: '${MODEL_NAME}' } with an add (or query by keywords: searchText)`,
    '/queryVector',
  );
}
