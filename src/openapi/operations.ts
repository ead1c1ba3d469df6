// Every route of the service as the OpenAPI document describes it: request
// and response schemas (valibot, the same values that validate requests) and
// the error codes the route can answer with. The conformance test checks that
// this list and the router's routes are the same set, and drives each entry's
// success and every listed error against the real app.
import * as v from 'valibot';
import type { ErrorCode } from '../errors.js';
import type { RequestSchemas } from '../schemas/index.js';
import * as r from '../schemas/responses.js';
import { NDJSON_TYPE } from '../export/format.js';
import { MODEL_FILES_PREFIX, MODEL_MANIFEST_PATH, MODEL_NAME } from '../embedding/model-files.js';
import { ModelFilesManifestSchema } from '../schemas/model-files.js';

/** The demo's text sample (scripts/demo-passages.ts writes it). */
const DemoPassagesSchema = v.array(
  v.object({
    id: v.string(),
    text: v.string(),
    metadata: v.object({
      source: v.pipe(v.string(), v.description('The file: README.md or docs/*.md.')),
      section: v.pipe(v.string(), v.description('The heading above it.')),
    }),
  }),
);

/** A JSON body (the envelope) or another media type (the SDK, the kernel, the demo page). */
export interface Content {
  mediaType: string;
  schema: v.GenericSchema;
}

export interface Operation {
  method: 'get' | 'post';
  path: string;
  /** Also the name of the SDK client's method for the route, where it has one. */
  operationId: string;
  summary: string;
  tag: 'service' | 'session' | 'vectors' | 'metadata' | 'search' | 'assets';
  auth: boolean;
  request?: v.GenericSchema;
  /** The request body's media type (application/json unless given). */
  requestMediaType?: string;
  /** Path parameters (`{name}` in path), each required, as an object schema. */
  params?: v.ObjectSchema<v.ObjectEntries, undefined>;
  /** Query parameters, as an object schema of optional fields. */
  query?: v.ObjectSchema<v.ObjectEntries, undefined> | v.StrictObjectSchema<v.ObjectEntries, undefined>;
  status: 200 | 201;
  responses: Content[];
  /** Under the per-address rate limit (POST /token); routes with auth are under the per-token one. */
  rateLimited?: boolean;
  /** Metric fields of its error bodies when no JSON success response declares them (a streamed route). */
  errorMetrics?: string[];
  /** Answers 304 to a matching If-None-Match. */
  etag?: boolean;
  errors: ErrorCode[];
}

/** INSTANCE_UNAVAILABLE: the instance holding the session is down (through the cluster's nginx) or still restoring. */
const AUTH: ErrorCode[] = ['UNAUTHORIZED', 'INVALID_TOKEN', 'SESSION_EXPIRED', 'RATE_LIMITED', 'INSTANCE_UNAVAILABLE'];
const BODY: ErrorCode[] = ['UNSUPPORTED_MEDIA_TYPE', 'INVALID_JSON', 'PAYLOAD_TOO_LARGE', 'VALIDATION_ERROR'];
/** SERVER_AT_CAPACITY: the server's memory budget would be passed. */
const WRITE: ErrorCode[] = [
  'DIMENSION_MISMATCH',
  'ZERO_VECTOR',
  'METRIC_LOCKED',
  'VECTOR_TYPE_LOCKED',
  'ANALYZER_LOCKED',
  'ANALYZER_CHANGED',
  'EMBEDDING_LOCKED',
  'CAPACITY_EXCEEDED',
  'SERVER_AT_CAPACITY',
  'DISK_QUOTA_EXCEEDED',
  'SESSION_LOG_FULL',
];
/** With DATA_DIR: a change that would pass DATA_DIR_MAX_BYTES or MAX_SESSION_LOG_BYTES (507). */
const DISK: ErrorCode[] = ['DISK_QUOTA_EXCEEDED', 'SESSION_LOG_FULL'];
/** SERVER_AT_CAPACITY: the search's working memory, or its answer in flight, would pass the memory budget; ANSWER_TOO_LARGE: past MAX_ANSWER_BYTES. */
const SEARCH: ErrorCode[] = ['DIMENSION_MISMATCH', 'ZERO_VECTOR', 'QUERY_TEXT_EMPTY', 'SERVER_AT_CAPACITY', 'ANSWER_TOO_LARGE'];
/** Routes that embed texts before their turn: a session without the model, the embedding threads full or failing. */
const EMBEDS: ErrorCode[] = ['NO_EMBEDDING_MODEL', 'EMBEDDING_BUSY', 'EMBEDDING_UNAVAILABLE', 'EMBEDDING_UPSTREAM_ERROR'];
/** Reads whose answer may be large: MAX_ANSWER_BYTES, and the memory budget while it is sent. */
const LARGE_READ: ErrorCode[] = ['ANSWER_TOO_LARGE', 'SERVER_AT_CAPACITY'];

const json = (schema: v.GenericSchema): Content[] => [{ mediaType: 'application/json', schema }];
const text = (mediaType: string, description: string): Content[] => [{ mediaType, schema: v.pipe(v.string(), v.description(description)) }];

export const OpenApiDocumentSchema = v.looseObject({
  openapi: v.literal('3.1.0'),
  info: v.looseObject({ title: v.string(), version: v.string() }),
  paths: v.record(v.string(), v.record(v.string(), v.unknown())),
});

/**
 * Routes the server answers that this document leaves out, and why: POST /mcp
 * speaks JSON-RPC (the Model Context Protocol), answers and errors included,
 * not the JSON envelope every operation here answers; docs/mcp.md describes it.
 */
export const NOT_IN_OPENAPI = [{ method: 'post', path: '/mcp', see: 'docs/mcp.md' }] as const;

/** POST with auth and a JSON body. */
function authed(
  path: string,
  operationId: string,
  summary: string,
  tag: Operation['tag'],
  request: v.GenericSchema | undefined,
  response: v.GenericSchema,
  errors: ErrorCode[] = [],
): Operation {
  return {
    method: 'post',
    path,
    operationId,
    summary,
    tag,
    auth: true,
    request,
    status: 200,
    responses: json(response),
    errors: [...AUTH, ...(request ? BODY : []), ...errors],
  };
}

export function operations(s: RequestSchemas): Operation[] {
  return [
    {
      method: 'get',
      path: '/',
      operationId: 'overview',
      tag: 'service',
      auth: false,
      status: 200,
      etag: true,
      errors: [],
      summary: 'What this service is: name, version, links and every route; a demo page for Accept: text/html.',
      responses: [...json(r.OverviewResponseSchema), ...text('text/html', 'The demo page (one static HTML file using /sdk.js).')],
    },
    {
      method: 'get',
      path: '/openapi.json',
      operationId: 'openapi',
      summary: 'This document.',
      tag: 'service',
      auth: false,
      status: 200,
      etag: true,
      responses: json(OpenApiDocumentSchema),
      errors: [],
    },
    {
      method: 'get',
      path: '/limits',
      operationId: 'limits',
      summary: 'The live public limits and server usage.',
      tag: 'service',
      auth: false,
      status: 200,
      responses: json(r.LimitsResponseSchema),
      errors: [],
    },
    {
      method: 'get',
      path: '/sdk.js',
      operationId: 'sdk',
      summary: 'The client SDK: one ES module for browsers and Node 20.',
      tag: 'assets',
      auth: false,
      status: 200,
      etag: true,
      responses: text('text/javascript', 'ES module source.'),
      errors: [],
    },
    {
      method: 'get',
      path: '/sdk.d.ts',
      operationId: 'sdkTypes',
      summary: 'TypeScript declarations of /sdk.js.',
      tag: 'assets',
      auth: false,
      status: 200,
      etag: true,
      responses: text('application/typescript', 'TypeScript declarations.'),
      errors: [],
    },
    {
      method: 'get',
      path: '/kernel.wasm',
      operationId: 'kernel',
      summary: "The WebAssembly search kernel the server runs (its build is /limits `backend`), for the SDK's local index.",
      tag: 'assets',
      auth: false,
      status: 200,
      etag: true,
      responses: [{ mediaType: 'application/wasm', schema: v.pipe(v.string(), v.description('WebAssembly binary.')) }],
      errors: [],
    },
    {
      method: 'get',
      path: '/kernel.simd128.wasm',
      operationId: 'kernelSimd128',
      summary: 'The simd128 build of the kernel, for pages whose engine cannot run /kernel.wasm (the relaxed-SIMD build).',
      tag: 'assets',
      auth: false,
      status: 200,
      etag: true,
      responses: [{ mediaType: 'application/wasm', schema: v.pipe(v.string(), v.description('WebAssembly binary.')) }],
      errors: [],
    },
    {
      method: 'get',
      path: '/demo/passages.json',
      operationId: 'demoPassages',
      summary: "The demo page's text sample: README and docs split into passages ({id, text, metadata: {source, section}}) at build time.",
      tag: 'assets',
      auth: false,
      status: 200,
      etag: true,
      responses: json(DemoPassagesSchema),
      errors: [],
    },
    {
      method: 'get',
      path: `/${MODEL_MANIFEST_PATH}`,
      operationId: 'modelManifest',
      summary: `Where the files of the embedding model ${MODEL_NAME} are, for LocalIndex.embed in a page.`,
      tag: 'assets',
      auth: false,
      status: 200,
      etag: true,
      responses: json(ModelFilesManifestSchema),
      errors: [],
    },
    {
      method: 'get',
      path: `${MODEL_FILES_PREFIX}/{hash}/{file}`,
      operationId: 'modelFile',
      summary: 'One file of the embedding model at its immutable, content-hashed URL (listed by the model manifest).',
      tag: 'assets',
      auth: false,
      params: v.object({
        hash: v.pipe(v.string(), v.description('The first 16 hex digits of the SHA-256 of the file.')),
        file: v.pipe(v.string(), v.description('The file name (embedding.wasm, model.json, vocab.json, group1-shard1of7, ...).')),
      }),
      status: 200,
      etag: true,
      responses: [
        { mediaType: 'application/wasm', schema: v.pipe(v.string(), v.description('The encoder kernel.')) },
        { mediaType: 'application/json', schema: v.pipe(v.unknown(), v.description('model.json or vocab.json as the model package ships them.')) },
        { mediaType: 'application/octet-stream', schema: v.pipe(v.string(), v.description('A weight shard (little-endian float32 tensors).')) },
      ],
      errors: ['NOT_FOUND'],
    },
    {
      method: 'post',
      path: '/token',
      operationId: 'createToken',
      summary: 'Create an anonymous token, its session and an empty index.',
      tag: 'session',
      auth: false,
      rateLimited: true,
      status: 201,
      responses: json(r.TokenResponseSchema),
      errors: ['VALIDATION_ERROR', 'RATE_LIMITED', 'TOO_MANY_SESSIONS', 'SERVER_AT_CAPACITY', 'INSTANCE_UNAVAILABLE'],
    },
    authed(
      '/embed',
      'embed',
      'Embed texts with the builtin model (use-lite-512: 512 dimensions, unit length, the first 128 tokens of each text): one vector per text, as JSON numbers or base64 float32.',
      'vectors',
      s.EmbedRequestSchema,
      r.EmbedResponseSchema,
      ['BATCH_TOO_LARGE', 'EMBEDDING_BUSY', 'EMBEDDING_UNAVAILABLE', 'EMBEDDING_UPSTREAM_ERROR', 'SERVER_AT_CAPACITY'],
    ),
    {
      method: 'get',
      path: '/healthz',
      operationId: 'health',
      summary: 'Liveness: the process answers.',
      tag: 'service',
      auth: false,
      status: 200,
      responses: json(r.HealthResponseSchema),
      errors: [],
    },
    {
      method: 'get',
      path: '/readyz',
      operationId: 'ready',
      summary: 'Readiness: kernel compiled, sessions on disk restored, not shutting down; 503 INSTANCE_UNAVAILABLE otherwise.',
      tag: 'service',
      auth: false,
      status: 200,
      responses: json(r.ReadyResponseSchema),
      errors: ['INSTANCE_UNAVAILABLE'],
    },
    {
      method: 'get',
      path: '/metrics',
      operationId: 'metrics',
      summary:
        'Prometheus text exposition: requests by route and status, latencies, sessions, vectors, memory, rate-limited and refused requests, kernel time, event-loop delay over METRICS_WINDOW_MS. A scrape changes nothing. With METRICS_TOKEN set it answers 401 UNAUTHORIZED unless sent `Authorization: Bearer <METRICS_TOKEN>`.',
      tag: 'service',
      auth: false,
      status: 200,
      responses: text('text/plain', 'Prometheus text format 0.0.4.'),
      errors: ['UNAUTHORIZED'],
    },
    {
      method: 'get',
      path: '/session',
      operationId: 'getSession',
      summary: 'The session, its stats and usage.',
      tag: 'session',
      auth: true,
      status: 200,
      responses: json(r.SessionResponseSchema),
      errors: AUTH,
    },
    authed(
      '/index/reset',
      'resetIndex',
      'Delete the whole index; dimensions and metric are unset, the token stays.',
      'session',
      undefined,
      r.ResetResponseSchema,
      ['VALIDATION_ERROR'],
    ),
    authed('/vectors/has', 'has', 'Whether a vector with this id exists.', 'vectors', s.HasRequestSchema, r.HasResponseSchema),
    authed('/vectors/get', 'get', 'One vector with its metadata.', 'vectors', s.GetRequestSchema, r.GetResponseSchema, ['VECTOR_NOT_FOUND']),
    authed(
      '/vectors/get-many',
      'getMany',
      'Several vectors; ids not stored are listed in notFound.',
      'vectors',
      s.GetManyRequestSchema,
      r.GetManyResponseSchema,
      ['BATCH_TOO_LARGE', ...LARGE_READ],
    ),
    authed('/vectors/metadata/get', 'getMetadata', 'The metadata of one vector.', 'metadata', s.GetMetadataRequestSchema, r.GetMetadataResponseSchema, [
      'VECTOR_NOT_FOUND',
    ]),
    authed('/vectors/metadata/set', 'setMetadata', 'Replace the metadata of one vector.', 'metadata', s.SetMetadataRequestSchema, r.SetMetadataResponseSchema, [
      'VECTOR_NOT_FOUND',
      ...DISK,
    ]),
    authed(
      '/vectors/metadata/delete',
      'deleteMetadata',
      'Empty the metadata of one vector.',
      'metadata',
      s.DeleteMetadataRequestSchema,
      r.DeleteMetadataResponseSchema,
      ['VECTOR_NOT_FOUND', ...DISK],
    ),
    authed('/vectors/add', 'add', 'Add or replace one vector; the first add fixes dimensions and metric.', 'vectors', s.AddRequestSchema, r.AddResponseSchema, [
      ...WRITE,
      ...EMBEDS,
    ]),
    authed('/vectors/add-many', 'addMany', 'Add or replace several vectors, all or nothing.', 'vectors', s.AddManyRequestSchema, r.AddManyResponseSchema, [
      ...WRITE,
      ...EMBEDS,
      'BATCH_TOO_LARGE',
    ]),
    authed(
      '/vectors/delete',
      'delete',
      'Delete one vector (an id not stored is reported, not an error).',
      'vectors',
      s.DeleteRequestSchema,
      r.DeleteResponseSchema,
      DISK,
    ),
    authed(
      '/vectors/delete-many',
      'deleteMany',
      'Delete several vectors: the ids given, or every vector a filter matches (exactly one of ids and filter), in one step.',
      'vectors',
      s.DeleteManyRequestSchema,
      r.DeleteManyResponseSchema,
      ['BATCH_TOO_LARGE', ...DISK],
    ),
    authed(
      '/vectors/touch',
      'touch',
      'Renew records (per-record TTL): each live one with a ttl expires ttlMs from now; ids not stored, deleted or expired are reported, not an error.',
      'vectors',
      s.TouchRequestSchema,
      r.TouchResponseSchema,
      ['BATCH_TOO_LARGE', ...DISK],
    ),
    authed('/vectors/count', 'count', 'How many vectors match a filter (all of them without one).', 'vectors', s.CountRequestSchema, r.CountResponseSchema),
    authed(
      '/vectors/facet',
      'facet',
      'Counts of each value at a metadata path among the vectors a filter matches (an array counts each distinct element once per vector), the most counted first, with numeric ranges if asked; read from the filter index.',
      'vectors',
      s.FacetRequestSchema,
      r.FacetResponseSchema,
    ),
    authed(
      '/vectors/list',
      'list',
      'One page of ids (and optionally vectors and metadata) in insertion order or by a metadata value (orderBy), optionally filtered; nextCursor continues, and a vector stored and unchanged through a whole listing appears exactly once.',
      'vectors',
      s.ListRequestSchema,
      r.ListResponseSchema,
      ['INVALID_CURSOR', ...LARGE_READ],
    ),
    authed(
      '/vectors/metadata/patch',
      'patchMetadata',
      'Change the metadata of one vector with an RFC 7396 JSON Merge Patch.',
      'metadata',
      s.PatchMetadataRequestSchema,
      r.PatchMetadataResponseSchema,
      ['VECTOR_NOT_FOUND', ...DISK],
    ),
    {
      method: 'get',
      path: '/vectors/export',
      operationId: 'exportVectors',
      tag: 'vectors',
      auth: true,
      status: 200,
      query: s.ExportQuerySchema,
      summary:
        'The whole session as NDJSON, streamed: a header line (format, version, dimensions, metric, vectorType, count), then one add-many record per vector in insertion order. A consistent snapshot of the moment it starts.',
      responses: text(NDJSON_TYPE, 'NDJSON: the header line, then {"id","vector","metadata"} per vector.'),
      errors: [...AUTH, 'VALIDATION_ERROR'],
      errorMetrics: ['dbOpenMs'],
    },
    {
      method: 'post',
      path: '/vectors/import',
      operationId: 'importVectors',
      tag: 'vectors',
      auth: true,
      status: 200,
      summary: "Import an export (NDJSON, up to maxImportBytes), validated whole and applied all or nothing with add-many's rules.",
      request: v.pipe(v.string(), v.description('NDJSON as GET /vectors/export writes it.')),
      requestMediaType: NDJSON_TYPE,
      responses: json(r.ImportResponseSchema),
      errors: [
        ...AUTH,
        'UNSUPPORTED_MEDIA_TYPE',
        'INVALID_JSON',
        'PAYLOAD_TOO_LARGE',
        'IMPORT_LINE_TOO_LARGE',
        'VALIDATION_ERROR',
        'INVALID_IMPORT',
        ...WRITE,
        ...EMBEDS,
      ],
    },
    authed('/vectors/clear', 'clear', 'Remove every vector; dimensions and metric stay.', 'vectors', undefined, r.ClearResponseSchema, ['VALIDATION_ERROR']),
    authed(
      '/search',
      'search',
      'The topK nearest vectors to one query (queryVector, or the stored vector queryId, itself left out), optionally filtered on metadata and cut at scoreThreshold.',
      'search',
      s.SearchRequestSchema,
      r.SearchResponseSchema,
      [...SEARCH, ...EMBEDS, 'VECTOR_NOT_FOUND'],
    ),
    authed(
      '/search-many',
      'searchMany',
      'The topK nearest vectors to each of several queries (queryVectors, or the stored vectors queryIds).',
      'search',
      s.SearchManyRequestSchema,
      r.SearchManyResponseSchema,
      [...SEARCH, ...EMBEDS, 'VECTOR_NOT_FOUND', 'BATCH_TOO_LARGE'],
    ),
  ];
}

/** The route-specific metric fields a JSON response schema declares (for the error bodies of that route). */
export function metricFieldsOf(schema: v.GenericSchema): string[] {
  const entries = (schema as { entries?: Record<string, v.GenericSchema> }).entries;
  const metrics = entries?.metrics as { pipe?: [{ entries: Record<string, unknown> }] } | undefined;
  return metrics?.pipe ? Object.keys(metrics.pipe[0].entries).filter((name) => name !== 'requestLatencyMs') : [];
}
