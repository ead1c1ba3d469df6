// A search's SDK options as the request's fields (`text` is queryText,
// `texts` queryTexts), shared by the client and LocalIndex.
import type * as t from './types.js';

/** A search's options as the request's fields (`text` is queryText). */
export function searchBody({ text, ...options }: t.SearchOptions): Record<string, unknown> {
  return text === undefined ? options : { ...options, queryText: text };
}
export function searchManyBody({ texts, ...options }: t.SearchManyOptions): Record<string, unknown> {
  return texts === undefined ? options : { ...options, queryTexts: texts };
}
