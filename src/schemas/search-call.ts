// A checked /search or /search-many body as the index's call: by stored ids,
// or by query vectors (none for a keyword search), with its options and the
// JSON Pointers its errors name. The routes and the SDK's LocalIndex both make
// their call here, so the page answers and refuses as the server does.
import type * as v from 'valibot';
import { pointer } from '../errors.js';
import type { SearchOptions } from '../index/types.js';
import type { RequestSchemas } from './index.js';
import type { VectorOutput } from './vector.js';

export type SearchCall = { ids: string[]; options: SearchOptions } | { ids: null; queries: VectorOutput[] | null; options: SearchOptions };

/** POST /search's body as the call. */
export function searchCall({ queryVector, queryId, queryText, ...options }: v.InferOutput<RequestSchemas['SearchRequestSchema']>): SearchCall {
  const texts = queryText === undefined ? {} : { queryTexts: [queryText], textPathOf: () => pointer('queryText') };
  if (queryId !== undefined) return { ids: [queryId], options: { ...options, ...texts, pathOf: () => pointer('queryId') } };
  return { ids: null, queries: queryVector === undefined ? null : [queryVector], options: { ...options, ...texts, pathOf: () => pointer('queryVector') } };
}

/** POST /search-many's body as the call. */
export function searchManyCall({ queryVectors, queryIds, queryTexts, ...options }: v.InferOutput<RequestSchemas['SearchManyRequestSchema']>): SearchCall {
  const texts = queryTexts === undefined ? {} : { queryTexts, textPathOf: (j: number) => pointer('queryTexts', j) };
  if (queryIds !== undefined) return { ids: queryIds, options: { ...options, ...texts, pathOf: (j) => pointer('queryIds', j) } };
  return { ids: null, queries: queryVectors ?? null, options: { ...options, ...texts, pathOf: (j) => pointer('queryVectors', j) } };
}
