// The MCP tools: each checks its arguments with its schema (tool-schemas.ts)
// and runs the same code as its HTTP route (the route's exported work on a
// checked body), in the /mcp request's session; its answer is structured
// content plus the same as readable text. Failures are thrown as ApiErrors;
// server.ts makes them tool results with isError.
import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import * as v from 'valibot';
import type { Config } from '../config.js';
import { apiError, pointer } from '../errors.js';
import type { SearchHit, VectorInput } from '../index/types.js';
import type { TurnOwner } from '../limits/loop-turns.js';
import { REQUEST_SLICE_MS, Slices } from '../limits/slices.js';
import { requestError } from '../schemas/request-error.js';
import { stateOf, turnOwnerOf, type RouteDeps } from '../http/context.js';
import { listPage } from '../http/routes/listing.js';
import { searchOnce } from '../http/routes/search.js';
import { deleteMany, upsert } from '../http/routes/vectors.js';
import type { McpToolSchemas } from './tool-schemas.js';

/** What a tool answers: its structured content and the same as text. */
export interface ToolAnswer {
  structured: Record<string, unknown>;
  text: string;
}

/** What a tool runs with: the /mcp request (its session and timings), the routes' dependencies, and the tools' schemas. */
export interface ToolContext {
  ctx: Context;
  deps: RouteDeps;
  schemas: McpToolSchemas;
  /** Holds an answer's bytes in the memory budget until the /mcp request is done (503 when they do not fit). */
  holdAnswer(bytes: number): void;
}

export interface McpTool {
  name: string;
  title: string;
  description: string;
  schema(schemas: McpToolSchemas): v.GenericSchema;
  run(context: ToolContext, args: unknown): Promise<ToolAnswer>;
}

/** A tool's checked arguments, or 400 VALIDATION_ERROR (BATCH_TOO_LARGE past a batch cap) with each issue's path in the arguments. */
function parseArgs<S extends v.GenericSchema>(schema: S, args: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, args ?? {});
  if (result.success) return result.output;
  throw requestError(result.issues, 'arguments');
}

/** The structured answer and its text: about twice the route's answer. */
const BOTH_FORMS = 2;

/**
 * An answer is made in one piece (the SDK writes the JSON-RPC message with one JSON.stringify), so
 * it has a cap of its own, MAX_MCP_ANSWER_BYTES, checked on the route's estimate before it is made.
 */
function assertMcpAnswerSize(config: Config, routeBytes: number, smaller: string): number {
  const bytes = BOTH_FORMS * routeBytes;
  if (bytes <= config.maxMcpAnswerBytes) return bytes;
  throw apiError(
    'ANSWER_TOO_LARGE',
    `the answer would take about ${bytes} bytes, more than the ${config.maxMcpAnswerBytes} of MAX_MCP_ANSWER_BYTES; ${smaller}`,
    {
      answerBytes: bytes,
      maxAnswerBytes: config.maxMcpAnswerBytes,
    },
  );
}

type Stored = { id: string; text?: { toJSON(): unknown } | null; metadata?: { json: string; toJSON(): unknown } };

/** A memory as the tools answer it (text and metadata parsed, null for none), and its lines of the text form (the metadata's stored JSON as it is). */
function memoryOf(hit: Stored, head: string) {
  const memory = { id: hit.id, text: (hit.text?.toJSON() ?? null) as string | null, metadata: hit.metadata?.toJSON() ?? null };
  const lines = `${head}\n   text: ${memory.text ?? '(none)'}${hit.metadata ? `\n   metadata: ${hit.metadata.json}` : ''}`;
  return { memory, lines };
}

/** Each hit made a memory and its text, the event loop given back every few ms (answers reach MAX_MCP_ANSWER_BYTES). */
async function memoriesOf<T extends Stored>(owner: TurnOwner, hits: readonly T[], head: (hit: T, i: number) => string) {
  const slices = new Slices(REQUEST_SLICE_MS, { owner });
  const memories = [];
  const lines: string[] = [];
  for (let i = 0; i < hits.length; i++) {
    await slices.pause();
    const made = memoryOf(hits[i], head(hits[i], i));
    memories.push(made.memory);
    lines.push(made.lines);
  }
  return { memories, text: lines.join('\n') };
}

const recall: McpTool = {
  name: 'recall',
  title: 'Recall memories',
  description:
    'Search the memories of this session by meaning and by keywords (hybrid: the two rankings fused), best first. ' +
    'Answers each memory with its id, score, text and metadata. Narrow with a metadata filter (e.g. {"topic": "billing"} or {"step": {"$gte": 3}}); ' +
    'mode "meaning" or "keywords" searches by one of them alone. The same search as POST /search with queryVector {"text": query} and queryText query.',
  schema: (schemas) => schemas.RecallSchema,
  async run({ ctx, deps, schemas, holdAnswer }, args) {
    const { query, mode, ...options } = parseArgs(schemas.RecallSchema, args);
    const body = {
      ...options,
      ...(mode === 'keywords' ? {} : { queryVector: { text: query } }),
      ...(mode === 'meaning' ? {} : { queryText: query }),
      includeMetadata: true,
      includeText: true,
    };
    const { results, groups, answerBytes } = await searchOnce(ctx, deps, parseArgs(deps.schemas.SearchRequestSchema, body));
    holdAnswer(assertMcpAnswerSize(deps.config, answerBytes, 'ask for a lower topK'));
    const owner = turnOwnerOf(ctx);
    // The hits as memories: their score, and with mmr the order MMR picked them in.
    const found = async (hits: typeof results) => {
      const { memories, text } = await memoriesOf(owner, hits, (hit: SearchHit, i) => `${i + 1}. ${hit.id} (score ${hit.score})`);
      const listed = memories.map((memory, i) => {
        const { score, mmrRank } = hits[i];
        return { id: memory.id, score, ...(mmrRank === undefined ? {} : { mmrRank }), text: memory.text, metadata: memory.metadata };
      });
      return { listed, text };
    };
    if (!groups) {
      const { listed, text } = await found(results);
      return { structured: { results: listed }, text: listed.length === 0 ? 'No memory matches.' : text };
    }
    // groupBy: a list of memories per value, groups best first.
    const answered = [];
    const texts: string[] = [];
    for (const group of groups) {
      const { listed, text } = await found(group.hits);
      answered.push({ value: group.value, results: listed });
      texts.push(`${JSON.stringify(group.value)}:\n${text}`);
    }
    return { structured: { groups: answered }, text: answered.length === 0 ? 'No memory matches.' : texts.join('\n') };
  },
};

/** remember's items checked one at a time, the event loop given back every few ms; an issue's path is its place in the arguments. */
async function checkItems(owner: TurnOwner, schemas: McpToolSchemas, args: Record<string, unknown>): Promise<void> {
  const slices = new Slices(REQUEST_SLICE_MS, { waitBehind: true, owner });
  for (const field of ['texts', 'ids', 'metadata'] as const) {
    const items = args[field] as unknown[] | undefined;
    for (let i = 0; i < (items?.length ?? 0); i++) {
      await slices.pause();
      const result = v.safeParse(schemas.RememberItems[field] as v.GenericSchema, items![i]);
      if (!result.success) {
        const at = [field, i].map((key) => ({ type: 'array', origin: 'value', input: items, key, value: items![i] }));
        throw requestError(
          result.issues.map((issue) => ({ ...issue, path: [...at, ...(issue.path ?? [])] }) as v.BaseIssue<unknown>),
          'arguments',
        );
      }
    }
  }
}

const remember: McpTool = {
  name: 'remember',
  title: 'Remember texts',
  description:
    "Store texts in this session's private memory, each embedded for search by meaning and indexed for keywords; answers their ids. " +
    'Give one metadata object per text to filter on later (e.g. {"source": "web", "step": 3}), and ids to replace earlier memories.',
  schema: (schemas) => schemas.RememberSchema,
  async run({ ctx, deps, schemas }, args) {
    const { texts, ids, metadata, ...rest } = parseArgs(schemas.RememberBatchSchema, args);
    await checkItems(turnOwnerOf(ctx), schemas, args as Record<string, unknown>);
    const records = texts.map((text, i) => {
      const record: Record<string, unknown> = { ...rest, id: ids?.[i] ?? randomUUID(), text };
      if (metadata?.[i] !== undefined) record.metadata = metadata[i];
      return record as unknown as VectorInput;
    });
    const mutation = await upsert(ctx, deps, records, { pathOf: (i) => pointer('texts', i) }, 'addManyMs');
    const stored = records.map((record) => record.id);
    return {
      structured: { ids: stored, mutation },
      text: `Remembered ${stored.length} (${mutation.added} new, ${mutation.replaced} replaced): ${stored.join(', ')}`,
    };
  },
};

const forget: McpTool = {
  name: 'forget',
  title: 'Forget memories',
  description: 'Delete memories of this session, either by their ids or every one a metadata filter matches (e.g. {"topic": "draft"}), in one step.',
  schema: (schemas) => schemas.ForgetSchema,
  async run({ ctx, deps, schemas }, args) {
    const mutation = await deleteMany(ctx, deps, parseArgs(schemas.ForgetSchema, args));
    return { structured: { mutation }, text: `Forgot ${mutation.deleted} ${mutation.deleted === 1 ? 'memory' : 'memories'}.` };
  },
};

const listMemories: McpTool = {
  name: 'list_memories',
  title: 'List memories',
  description:
    'A page of the memories stored in this session, oldest first (a replaced one counts as new), with their texts and metadata; pass nextCursor as cursor for the next page. A filter lists only the memories it matches.',
  schema: (schemas) => schemas.ListMemoriesSchema,
  async run({ ctx, deps, schemas, holdAnswer }, args) {
    const body = { ...parseArgs(schemas.ListMemoriesSchema, args), includeMetadata: true, includeText: true };
    const { vectors, nextCursor, answerBytes } = await listPage(ctx, deps.config, parseArgs(deps.schemas.ListRequestSchema, body));
    holdAnswer(assertMcpAnswerSize(deps.config, answerBytes, 'ask for a lower limit'));
    const { memories, text } = await memoriesOf(turnOwnerOf(ctx), vectors as Stored[], (memory, i) => `${i + 1}. ${memory.id}`);
    const more = nextCursor === null ? '' : `\nMore: call list_memories with cursor "${nextCursor}".`;
    return { structured: { memories, nextCursor }, text: memories.length === 0 ? 'No memories.' : text + more };
  },
};

const memoryStats: McpTool = {
  name: 'memory_stats',
  title: 'Memory stats',
  description: "This session's memory: how many memories it holds and may hold, the embedding model, and when it expires (every call extends it).",
  schema: (schemas) => schemas.MemoryStatsSchema,
  async run({ ctx, deps, schemas }, args) {
    parseArgs(schemas.MemoryStatsSchema, args);
    const { session } = stateOf(ctx);
    await session.settled(); // its counts after an add applied in slices, not halfway
    const view = session.view(deps.store.now());
    const structured = {
      memories: view.vectorCount,
      maxMemories: view.maxVectors,
      model: view.config.embedding,
      expiresAt: view.expiresAt,
      ttlMsRemaining: view.ttlMsRemaining,
      session: view,
      stats: session.stats(),
    };
    const text = `${view.vectorCount} of at most ${view.maxVectors} memories; model ${view.config.embedding ?? 'none yet (fixed by the first remember)'}; expires at ${view.expiresAt} unless used again.`;
    return { structured, text };
  },
};

export const MCP_TOOLS: readonly McpTool[] = [remember, recall, forget, listMemories, memoryStats];
