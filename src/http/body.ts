// Reading and validating JSON request bodies.
import bodyParser from 'koa-bodyparser';
import type { Context, Middleware } from 'koa';
import * as v from 'valibot';
import type { Config } from '../config.js';
import { apiError, pointer } from '../errors.js';
import { firstTooDeep } from '../schemas/json-shape.js';

/** Levels of a body around a metadata object or filter: body, vectors, record (metadata sits at the 4th). */
const BODY_FRAME_DEPTH = 3;

/** Arrays whose maxLength is a batch cap: exceeding it is BATCH_TOO_LARGE. */
const BATCH_FIELDS = new Set(['vectors', 'ids', 'queryVectors']);

/** Before anything recursive (the validators, JSON.stringify) sees the body. */
function assertBodyDepth(body: unknown, maxDepth: number): void {
  const deep = firstTooDeep(body, maxDepth);
  if (!deep) return;
  const path = pointer(...deep);
  throw apiError('VALIDATION_ERROR', `invalid request body: ${path}: nested deeper than ${maxDepth} levels`, {
    issues: [{ path, message: `nested deeper than ${maxDepth} levels` }],
  });
}

/** Parse a JSON body (415 for another content type, 400 for malformed JSON, 413 when too large). */
export function jsonBody(config: Config): Middleware {
  const options: bodyParser.Options & { onProtoPoisoning: 'ignore' } = {
    enableTypes: ['json'],
    jsonLimit: String(config.maxBodyBytes),
    strict: true,
    // co-body refuses "__proto__" and "constructor.prototype" keys by default;
    // JSON.parse makes them own data properties, and metadata may use any key
    // (nothing here merges objects with Object.assign or for...in).
    onProtoPoisoning: 'ignore',
    onerror(err: Error & { status?: number }) {
      if (err.status === 413) throw apiError('PAYLOAD_TOO_LARGE', `the request body is larger than ${config.maxBodyBytes} bytes`, { limit: config.maxBodyBytes });
      if (err.status === 415) throw apiError('UNSUPPORTED_MEDIA_TYPE', err.message);
      throw apiError('INVALID_JSON', `the request body is not valid JSON: ${err.message}`);
    },
  };
  const parse = bodyParser(options);
  return async (ctx, next) => {
    const hasBody = Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
    if (!ctx.is('application/json') && (hasBody || ctx.get('content-type') !== '')) {
      throw apiError('UNSUPPORTED_MEDIA_TYPE', 'send the body as JSON with content-type: application/json', {
        contentType: ctx.get('content-type') || null,
      });
    }
    await parse(ctx, async () => {
      assertBodyDepth(ctx.request.body, BODY_FRAME_DEPTH + config.maxJsonDepth);
      await next();
    });
  };
}

function issuePath(issue: v.BaseIssue<unknown>): string {
  return pointer(...(issue.path ?? []).map((item) => item.key as string | number));
}

/** Validate the body against `schema`; throws VALIDATION_ERROR or BATCH_TOO_LARGE with every issue's path. */
export function parseBody<S extends v.GenericSchema>(ctx: Context, schema: S): v.InferOutput<S> {
  const result = v.safeParse(schema, ctx.request.body ?? {});
  if (result.success) return result.output;
  const batch = result.issues.find((issue) => issue.type === 'max_length' && issue.path?.length === 1 && BATCH_FIELDS.has(String(issue.path[0].key)));
  if (batch) {
    const field = String(batch.path![0].key);
    throw apiError('BATCH_TOO_LARGE', `${field} holds ${(batch.input as unknown[]).length} items; the limit is ${batch.requirement}`, {
      path: pointer(field), limit: batch.requirement, actual: (batch.input as unknown[]).length,
    });
  }
  const issues = result.issues.slice(0, 20).map((issue) => ({ path: issuePath(issue), message: issue.message }));
  throw apiError('VALIDATION_ERROR', `invalid request body: ${issues[0].path || '/'}: ${issues[0].message}`, { issues });
}
