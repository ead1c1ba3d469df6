// Reading and validating JSON request bodies.
import { isAscii } from 'node:buffer';
import getRawBody from 'raw-body';
import type { Context, Middleware } from 'koa';
import * as v from 'valibot';
import type { Config } from '../config.js';
import { apiError, pointer } from '../errors.js';
import { loadKernelModule } from '../kernel/load-node.js';
import { firstTooDeep } from '../schemas/json-shape.js';
import { requestError } from '../schemas/request-error.js';
import { ArenaLease, ArenaPool, MAX_SPARE_BYTES } from './arena-pool.js';
import { BodySpace } from './body-space.js';
import { readInto } from './read-into.js';
import { parseVectorJson } from './vector-json.js';

declare module 'koa' {
  interface Request {
    /** The parsed JSON body (set by jsonBody). */
    body?: unknown;
  }
}

/** Levels of a body around a metadata object or filter: body, vectors, record (metadata sits at the 4th). */
const BODY_FRAME_DEPTH = 3;

/** Before anything recursive (the validators, JSON.stringify) sees the body. */
function assertBodyDepth(body: unknown, maxDepth: number): void {
  const deep = firstTooDeep(body, maxDepth);
  if (!deep) return;
  const path = pointer(...deep);
  throw apiError('VALIDATION_ERROR', `invalid request body: ${path}: nested deeper than ${maxDepth} levels`, {
    issues: [{ path, message: `nested deeper than ${maxDepth} levels` }],
  });
}

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** The most bytes of body spaces kept between requests (a space for an 8 MB body takes 14 MB). */
const SPACES_SPARE_TOTAL = 32 * 1024 * 1024;

/** Bodies from this size up, with a Content-Length, are read into a reused buffer (read-into.ts); smaller ones cost little either way. */
const PREALLOCATE_FROM = 64 * 1024;

/** The announced body length when the body can be read into one buffer taken from the lease, else null. */
function preallocatable(ctx: Context, length: string, limit: number): number | null {
  const n = Number(length);
  if (length === '' || !Number.isSafeInteger(n) || n < PREALLOCATE_FROM || n > limit || n > MAX_SPARE_BYTES) return null;
  // Anything unusual about the stream is left to raw-body, which reports it.
  return ctx.req.readable && ctx.req.readableEncoding === null ? n : null;
}

/**
 * Where a body read into one buffer goes: a buffer from the lease, or for a
 * vector body a space of its own (body-space.ts) taken from `spaces`.
 */
interface BodyTarget {
  lease: ArenaLease;
  spaces?: ArenaLease<BodySpace>;
  /** The space the body was read into, if any. */
  space?: BodySpace;
}

/** A buffer of `length` bytes to read the body into. */
function bufferFor(target: BodyTarget, length: number): Buffer {
  if (!target.spaces) return Buffer.from(target.lease.take(length), 0, length);
  target.space = target.spaces.take(BodySpace.bytesFor(length));
  return target.space.open(length);
}

/** The request body as bytes: 413 past the limit, 400 when it ends early. */
async function readBytes(ctx: Context, limit: number, target: BodyTarget): Promise<Buffer> {
  const encoding = ctx.get('content-encoding');
  if (encoding !== '' && encoding.toLowerCase() !== 'identity') {
    throw apiError('UNSUPPORTED_MEDIA_TYPE', `content-encoding ${encoding} is not accepted; send the body uncompressed`);
  }
  const length = ctx.get('content-length');
  try {
    const known = preallocatable(ctx, length, limit);
    if (known !== null) return await readInto(ctx.req, known, limit, bufferFor(target, known));
    return await getRawBody(ctx.req, { limit, length: length === '' ? undefined : length });
  } catch (err) {
    const { type } = err as { type?: string };
    if (type === 'entity.too.large') throw apiError('PAYLOAD_TOO_LARGE', `the request body is larger than ${limit} bytes`, { limit });
    throw apiError('INVALID_JSON', `the request body could not be read: ${(err as Error).message}`);
  }
}

/** Decode strictly: invalid UTF-8 is refused, not turned into U+FFFD and stored. */
function parseJson(bytes: Buffer): unknown {
  if (bytes.length === 0) return {};
  let text: string;
  try {
    // Pure ASCII (JSON numbers, base64, most ids) reads the same in UTF-8 and
    // latin1, and the latin1 copy is ~3x faster than the strict decoder.
    text = isAscii(bytes) ? bytes.toString('latin1') : utf8.decode(bytes);
  } catch {
    throw apiError('INVALID_JSON', 'the request body is not valid UTF-8');
  }
  try {
    // JSON.parse makes "__proto__" an own data property, so metadata may use
    // any key; nothing downstream merges objects with Object.assign or for...in.
    return JSON.parse(text);
  } catch (err) {
    throw apiError('INVALID_JSON', `the request body is not valid JSON: ${(err as Error).message}`);
  }
}

export interface JsonBodyOptions {
  /**
   * The body of add, add-many, search or search-many: vectors (number
   * arrays and base64) are read straight into float32 (vector-json.ts), in
   * buffers reused from one request to the next; bodies that reader
   * declines take the ordinary path.
   */
  vectors?: boolean;
}

/**
 * Parse a JSON body (415 for another content type or a compressed body, 400
 * for malformed JSON or UTF-8, 413 when too large). An empty body is {}.
 */
export function jsonBody(config: Config, options: JsonBodyOptions = {}): Middleware {
  const buffers = new ArenaPool();
  // A space holds a body and up to 0.75 of its size in floats (touched only by base64 vectors).
  const spaces = options.vectors ? new ArenaPool((bytes) => new BodySpace(loadKernelModule(), bytes), BodySpace.bytesFor(MAX_SPARE_BYTES), SPACES_SPARE_TOTAL) : undefined;
  return async (ctx, next) => {
    const hasBody = Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
    if (!ctx.is('application/json') && (hasBody || ctx.get('content-type') !== '')) {
      throw apiError('UNSUPPORTED_MEDIA_TYPE', 'send the body as JSON with content-type: application/json', {
        contentType: ctx.get('content-type') || null,
      });
    }
    // The body's buffer, and the vectors' ones, are reused once the route is done with them (arena-pool.ts).
    const target: BodyTarget = { lease: new ArenaLease(buffers), spaces: spaces && new ArenaLease(spaces) };
    try {
      const bytes = await readBytes(ctx, config.maxBodyBytes, target);
      const body = (options.vectors && parseVectorJson(bytes, target.lease, target.space)) || parseJson(bytes);
      assertBodyDepth(body, BODY_FRAME_DEPTH + config.maxJsonDepth);
      ctx.request.body = body;
      await next();
    } finally {
      target.lease.release();
      target.spaces?.release();
    }
  };
}

/** Validate the body against `schema`; throws VALIDATION_ERROR or BATCH_TOO_LARGE with every issue's path. */
export function parseBody<S extends v.GenericSchema>(ctx: Context, schema: S): v.InferOutput<S> {
  const result = v.safeParse(schema, ctx.request.body ?? {});
  if (result.success) return result.output;
  throw requestError(result.issues);
}
