// A checked /search or /search-many body as the index's call: by stored ids,
// or by query vectors (none for a keyword search), with its options and the
// JSON Pointers its errors name. The routes and the SDK's LocalIndex both make
// their call here, so the page answers and refuses as the server does. A query
// by text ({"text": ...}) holds its place in `queries` with an empty vector
// until its embedding is put there (withEmbeddedQueries).
import type * as v from 'valibot';
import { pointer } from '../errors.js';
import type { SearchOptions } from '../index/types.js';
import type { RequestSchemas } from './index.js';
import { isTextQuery, type QueryOutput, type VectorOutput } from './vector.js';

/** Queries by text: the texts, and where each one's vector goes in `queries`. */
export interface TextQueries {
  at: number[];
  texts: string[];
}

export type SearchCall =
  | { ids: string[]; options: SearchOptions }
  | { ids: null; queries: VectorOutput[] | null; options: SearchOptions; textQueries?: TextQueries };

/** POST /search's body as the call. */
export function searchCall({ queryVector, queryId, queryText, ...options }: v.InferOutput<RequestSchemas['SearchRequestSchema']>): SearchCall {
  const texts = queryText === undefined ? {} : { queryTexts: [queryText], textPathOf: () => pointer('queryText') };
  if (queryId !== undefined) return { ids: [queryId], options: { ...options, ...texts, pathOf: () => pointer('queryId') } };
  return { ids: null, ...queriesOf(queryVector === undefined ? null : [queryVector]), options: { ...options, ...texts, pathOf: () => pointer('queryVector') } };
}

/** POST /search-many's body as the call. */
export function searchManyCall({ queryVectors, queryIds, queryTexts, ...options }: v.InferOutput<RequestSchemas['SearchManyRequestSchema']>): SearchCall {
  const texts = queryTexts === undefined ? {} : { queryTexts, textPathOf: (j: number) => pointer('queryTexts', j) };
  if (queryIds !== undefined) return { ids: queryIds, options: { ...options, ...texts, pathOf: (j) => pointer('queryIds', j) } };
  return { ids: null, ...queriesOf(queryVectors ?? null), options: { ...options, ...texts, pathOf: (j) => pointer('queryVectors', j) } };
}

const NOT_YET_EMBEDDED = new Float32Array(0);

/** The query vectors, a text query's place held until it is embedded. */
function queriesOf(given: QueryOutput[] | null): { queries: VectorOutput[] | null; textQueries?: TextQueries } {
  if (given === null || !given.some(isTextQuery)) return { queries: given as VectorOutput[] | null };
  const textQueries: TextQueries = { at: [], texts: [] };
  const queries = given.map((query, j) => {
    if (!isTextQuery(query)) return query;
    textQueries.at.push(j);
    textQueries.texts.push(query.text);
    return NOT_YET_EMBEDDED;
  });
  return { queries, textQueries };
}

/** The call with each text query's embedding (`vectors`, in the order of textQueries.texts) in its place. */
export function withEmbeddedQueries(call: SearchCall & { ids: null }, vectors: readonly Float32Array[]): SearchCall {
  const queries = [...(call.queries ?? [])];
  call.textQueries?.at.forEach((j, k) => {
    queries[j] = vectors[k];
  });
  return { ids: null, queries, options: call.options };
}
