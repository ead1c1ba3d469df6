// The MCP tools' arguments, built from the HTTP routes' request schemas
// (src/schemas/): each tool takes the fields of its route it does not fix
// itself, so a field added to a route's schema (a search option, a record
// field) becomes an argument of its tool with no change here. Bounds and
// descriptions are the routes' own; the JSON Schemas of tools/list are made
// from these (tool-list.ts).
import * as v from 'valibot';
import type { Config } from '../config.js';
import type { RequestSchemas } from '../schemas/index.js';

/** How recall searches: both arms fused (the default), by meaning alone, or by keywords alone. */
export const RECALL_MODES = ['hybrid', 'meaning', 'keywords'] as const;

/** The search fields recall sets itself from `query` (and always asks texts and metadata back). */
const RECALL_FIXES = ['queryVector', 'queryId', 'queryText', 'includeMetadata', 'includeText'] as const;
/** The record fields remember takes as arrays (one per text); every other field of a record applies to all of them. */
const REMEMBER_ARRAYS = ['id', 'vector', 'text', 'metadata'] as const;
/** The list fields list_memories takes; it always asks texts and metadata, never vectors. */
const LIST_TAKES = ['cursor', 'limit', 'filter'] as const;

interface RememberArrays {
  texts: unknown[];
  ids?: unknown[];
  metadata?: unknown[];
}

function sameLength(field: 'ids' | 'metadata') {
  return v.check<RememberArrays, string>(
    (args) => args[field] === undefined || args[field].length === args.texts.length,
    `${field} must hold one entry per text`,
  );
}

export function mcpToolSchemas(config: Config, schemas: RequestSchemas) {
  const search = schemas.SearchRequestSchema.pipe[0];
  const record = schemas.ImportRecordSchema;
  const { id: IdSchema, metadata: OptionalMetadata, text: OptionalText } = record.entries;
  const { queryText } = search.entries;
  const batch = (item: v.GenericSchema) => v.pipe(v.array(item), v.minLength(1), v.maxLength(config.maxAddManyBatch));

  /** remember's items, checked one at a time in slices (remember.ts); the published schema holds them in its arrays. */
  const RememberItems = {
    texts: v.pipe(OptionalText.wrapped, v.minLength(1, 'a text to remember must not be empty')),
    ids: IdSchema,
    metadata: OptionalMetadata.wrapped,
  };
  const rememberObject = (texts: v.GenericSchema, ids: v.GenericSchema, metadata: v.GenericSchema) =>
    v.pipe(
      v.strictObject({
        texts: v.pipe(batch(texts), v.description(`The texts to remember, each stored with its embedding under the session's model and indexed for keywords.`)),
        ids: v.optional(v.pipe(batch(ids), v.description('One id per text; by default new random ids. An id already stored is replaced.'))),
        metadata: v.optional(v.pipe(batch(metadata), v.description('One metadata object per text (filterable in recall, forget and list_memories).'))),
        ...v.omit(record, REMEMBER_ARRAYS).entries,
      }),
      sameLength('ids'),
      sameLength('metadata'),
    );

  return {
    RememberSchema: rememberObject(RememberItems.texts, RememberItems.ids, RememberItems.metadata),
    /** The batch and its other fields, before its items are checked. */
    RememberBatchSchema: rememberObject(v.unknown(), v.unknown(), v.unknown()),
    RememberItems,
    RecallSchema: v.strictObject({
      query: v.pipe(
        queryText.wrapped,
        v.minLength(1, 'a query must not be empty'),
        v.description('What to recall, in words: searched by meaning (its embedding) and by keywords (BM25), the two rankings fused.'),
      ),
      mode: v.optional(
        v.pipe(
          v.picklist(RECALL_MODES),
          v.description('hybrid (default): by meaning and by keywords, fused; meaning: by the embedding alone; keywords: by BM25 alone.'),
        ),
        'hybrid',
      ),
      ...v.omit(search, RECALL_FIXES).entries,
    }),
    ForgetSchema: schemas.DeleteManyRequestSchema,
    ListMemoriesSchema: v.strictObject(v.pick(schemas.ListRequestSchema, LIST_TAKES).entries),
    MemoryStatsSchema: v.strictObject({}),
  };
}
export type McpToolSchemas = ReturnType<typeof mcpToolSchemas>;
