// The OpenAPI 3.1 document served at GET /openapi.json, generated from the
// valibot schemas: requests from src/schemas/{vectors,search}.ts (the values
// the routes validate with, bounds taken from the config), responses from
// src/schemas/responses.ts, errors from src/errors.ts.
import type { JsonSchema } from '@valibot/to-json-schema';
import * as v from 'valibot';
import type { Config } from '../config.js';
import { ERROR_CODES, type ErrorCode } from '../errors.js';
import { codesByStatus, errorResponseSchema, metricsSchema, SessionSchema } from '../schemas/envelope.js';
import { requestSchemas } from '../schemas/index.js';
import { LimitsSchema } from '../schemas/limits-response.js';
import { SearchHitSchema, SearchStatsSchema, StoredVectorSchema } from '../schemas/responses.js';
import { OPERATION_DESCRIPTIONS } from './descriptions.js';
import { toOpenApiComponents, toOpenApiSchema } from './json-schema.js';
import { metricFieldsOf, NOT_IN_OPENAPI, operations, type Operation } from './operations.js';

export interface DocumentInfo {
  name: string;
  version: string;
  description: string;
  /** package.json's `license`: an SPDX expression, or UNLICENSED (none granted). */
  license?: string;
}

/** The OpenAPI license object of package.json's `license`. */
function licenseObject(license: string | undefined) {
  if (license === undefined || license === 'UNLICENSED') {
    return { name: 'UNLICENSED: no license is granted (private package)', identifier: 'LicenseRef-UNLICENSED' };
  }
  return { name: license, identifier: license };
}

/** Shared schemas, published once under components.schemas and referenced from the operations. */
const DEFINITIONS: Record<string, v.GenericSchema> = {
  Session: SessionSchema,
  Limits: LimitsSchema,
  StoredVector: StoredVectorSchema,
  SearchHit: SearchHitSchema,
  SearchStats: SearchStatsSchema,
};

const ALL_CODES = Object.keys(ERROR_CODES) as ErrorCode[];
/** Any route can fail unexpectedly; it is answered without internals. */
const ALWAYS: ErrorCode[] = ['INTERNAL_ERROR'];

const STATUS_TEXT: Record<number, string> = {
  400: 'Invalid request',
  401: 'Missing, invalid or expired token',
  404: 'Not found',
  405: 'Method not allowed',
  409: 'Conflicts with the session state',
  413: 'Body too large',
  415: 'Body is not JSON',
  429: 'Too many requests',
  500: 'Internal error',
  503: 'Server at capacity or instance unavailable',
};

const schema = (s: v.GenericSchema) => toOpenApiSchema(s, DEFINITIONS);

/** Every error body, any code; `metrics` open to the route's own timing fields. Each error response narrows it. */
function sharedErrorSchema() {
  const { entries } = errorResponseSchema(ALL_CODES);
  const metrics = v.pipe(
    v.objectWithRest({ requestLatencyMs: v.number() }, v.number()),
    v.description('Server-side timings of this request, in milliseconds (counts for resultCount and queryCount); also in the Server-Timing header.'),
  );
  return v.strictObject({ ...entries, metrics: v.optional(metrics) });
}

/** An error answer: the shared ErrorResponse, its code narrowed to `codes` and its metrics to the route's. */
function errorBodySchema(codes: ErrorCode[], metricFields: string[]) {
  return {
    allOf: [
      { $ref: '#/components/schemas/ErrorResponse' },
      {
        type: 'object',
        required: ['error'],
        properties: {
          error: { type: 'object', required: ['code'], properties: { code: { type: 'string', enum: codes } } },
          metrics: schema(metricsSchema(metricFields, 'optional')),
        },
      },
    ],
  };
}

/** Node's HTTP parser answers it, before the app, on every route (its default limit: 16 KiB of headers). */
const HEADERS_TOO_LARGE = {
  description: "Request headers larger than Node's limit (16 KiB); answered before the app (no metrics), and the connection is closed.",
  content: {
    'application/json': {
      schema: {
        allOf: [
          {
            type: 'object',
            required: ['success', 'error'],
            properties: {
              success: { const: false },
              error: { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } },
            },
          },
          { properties: { error: { properties: { code: { enum: ['HEADERS_TOO_LARGE'] } } } } },
        ],
      },
    },
  },
};

const TAGS: Record<Operation['tag'], string> = {
  service: 'What the service is and what it allows: overview, this document, limits, health and metrics.',
  session: 'Tokens and their sessions: one private index per token, deleted when idle for the session TTL.',
  vectors: "Add, read, list, delete, export and import the vectors of the caller's index.",
  metadata: 'Read and change the JSON metadata object stored with each vector.',
  search: 'Exact nearest-neighbour search, one query or many, with metadata filters.',
  assets: 'Files for web pages and Node: the SDK module, its TypeScript declarations and the WebAssembly kernel.',
};

/** Response headers, published once under components.headers. */
const HEADERS = {
  'RateLimit-Policy': {
    description:
      'The rate limit this answer counts against (IETF RateLimit header fields draft): `"per-token";q=<burst>;w=<seconds>` on authenticated routes, `"per-address";q=<tokens>;w=60` on POST /token. Absent when the limit is off.',
    schema: { type: 'string', examples: ['"per-token";q=1000;w=2'] },
  },
  RateLimit: {
    description: 'What is left of that limit after this request: `r` requests now, `t` seconds until the whole quota is back. Absent when the limit is off.',
    schema: { type: 'string', examples: ['"per-token";r=998;t=1'] },
  },
  'Retry-After': {
    description: 'Seconds to wait before retrying.',
    schema: { type: 'integer', minimum: 1 },
  },
};
const header = (name: keyof typeof HEADERS) => ({ $ref: `#/components/headers/${name}` });

/** The headers of one answer: the rate-limit fields under a limit (not on 401: no token, no budget), Retry-After on 429, 503 and 507. */
function headersOf(op: Operation, status: number): Record<string, unknown> | undefined {
  const out: Record<string, unknown> = {};
  if ((op.auth || op.rateLimited) && status !== 401) {
    out['RateLimit-Policy'] = header('RateLimit-Policy');
    out.RateLimit = header('RateLimit');
  }
  if (status === 429 || status === 503 || status === 507) out['Retry-After'] = header('Retry-After');
  return Object.keys(out).length ? out : undefined;
}

function errorResponses(op: Operation) {
  const metricFields = op.errorMetrics ?? op.responses.flatMap((c) => (c.mediaType === 'application/json' ? metricFieldsOf(c.schema) : []));
  const out: Record<string, unknown> = {};
  for (const [status, codes] of codesByStatus([...op.errors, ...ALWAYS])) {
    const headers = headersOf(op, status);
    out[String(status)] = {
      description: `${STATUS_TEXT[status] ?? 'Error'}: ${codes.join(', ')}`,
      ...(headers ? { headers } : {}),
      content: { 'application/json': { schema: errorBodySchema(codes, metricFields) } },
    };
  }
  return out;
}

function operationObject(op: Operation) {
  const headers = {
    ...(op.etag ? { ETag: { description: 'Validator for If-None-Match.', schema: { type: 'string' } } } : {}),
    ...headersOf(op, op.status),
  };
  const responses: Record<string, unknown> = {
    [String(op.status)]: {
      description: op.summary,
      content: Object.fromEntries(op.responses.map((c) => [c.mediaType, { schema: schema(c.schema) }])),
      ...(Object.keys(headers).length ? { headers } : {}),
    },
  };
  if (op.etag) responses['304'] = { description: 'Not modified (If-None-Match matched the ETag).' };
  Object.assign(responses, errorResponses(op));
  responses['431'] = HEADERS_TOO_LARGE;
  const description = OPERATION_DESCRIPTIONS[op.operationId];
  if (!description) throw new Error(`operation ${op.operationId} has no description in src/openapi/descriptions.ts`);
  return {
    operationId: op.operationId,
    summary: op.summary,
    description,
    tags: [op.tag],
    security: op.auth ? [{ bearerAuth: [] }] : [],
    ...(op.params || op.query ? { parameters: [...(op.params ? parameters(op.params, 'path') : []), ...(op.query ? parameters(op.query, 'query') : [])] } : {}),
    ...(op.request ? { requestBody: { required: true, content: { [op.requestMediaType ?? 'application/json']: { schema: schema(op.request) } } } } : {}),
    responses,
  };
}

/** Parameters, one per field of an object schema: path ones required, query ones optional. */
function parameters(fields: NonNullable<Operation['params'] | Operation['query']>, where: 'path' | 'query') {
  const converted = schema(fields) as { properties?: Record<string, { description?: string }> };
  return Object.entries(converted.properties ?? {}).map(([name, property]) => ({
    name,
    in: where,
    required: where === 'path',
    description: property.description,
    schema: property,
  }));
}

export function openApiDocument(config: Config, info: DocumentInfo) {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const op of operations(requestSchemas(config))) {
    paths[op.path] = { ...paths[op.path], [op.method]: operationObject(op) };
  }
  const components: Record<string, JsonSchema> = {
    ...toOpenApiComponents(DEFINITIONS),
    ErrorResponse: toOpenApiSchema(sharedErrorSchema(), DEFINITIONS),
  };
  return {
    openapi: '3.1.0' as const,
    jsonSchemaDialect: 'https://json-schema.org/draft/2020-12/schema',
    info: {
      title: info.name,
      version: info.version,
      description: `${info.description}. Error codes and their statuses: ${ALL_CODES.map((c) => `${c} ${ERROR_CODES[c]}`).join(', ')}. Not described here: ${NOT_IN_OPENAPI.map((r) => `${r.method.toUpperCase()} ${r.path} (see ${r.see})`).join(', ')}.`,
      contact: { name: `${info.name} service operators` },
      license: licenseObject(info.license),
    },
    servers: [{ url: '/' }],
    tags: Object.entries(TAGS).map(([name, description]) => ({ name, description })),
    paths,
    components: {
      schemas: components,
      headers: HEADERS,
      securitySchemes: {
        bearerAuth: {
          type: 'http',
          scheme: 'bearer',
          description:
            'The token from POST /token, opaque to clients: `<secret>` (43 base64url characters) or, on a server with an INSTANCE_ID, `<instanceId>.<secret>`; a proxy in front of several instances routes on the prefix. Every response names its instance in `x-tempvec-instance`.',
        },
      },
    },
  };
}
