// The request-body pipeline, in the order a body goes through it:
//   1. content-type.ts   415 unless application/json, uncompressed
//   2. read.ts           the bytes, within maxBodyBytes (413), held in the memory
//                        budget as they arrive (arrival.ts), into a spare
//                        buffer (spare-buffers.ts, read-into.ts) or, for a vector
//                        body, a WasmBodyBuffer (wasm-body-buffer.ts)
//   3. vector-reader.ts  vector bodies: vectors straight into float32 (JSON
//                        numbers, and base64 through base64-decoder.ts), in slices
//                        that give the event loop back (SLICE_MS); it may decline
//   4. parse-json.ts     everything else: strict UTF-8, then JSON.parse (400 INVALID_JSON);
//                        before 4, depth.ts scans the brackets (prunedBodyIfTooDeep); 3 declines
//                        a value nested past 64 levels itself, so a vector body is not scanned twice
//   5. depth.ts          the nesting limit, before anything recursive runs
//   6. validate.ts       in the route: parseBody(ctx, schema), valibot; add-many
//                        through parseAddManyBody (its CheckedBatch: schemas/checked-batch.ts)
// Pooled buffers go back once the route is done (after `await next()`).
import type { Middleware } from 'koa';
import type { Context } from 'koa';
import type { Config } from '../../config.js';
import { MAX_WASM_BODY_BUFFERS } from '../../limits/wasm-memories.js';
import { loadKernelModule } from '../../kernel/load-node.js';
import type { MemoryBudget } from '../../limits/memory-budget.js';
import { BodyArrival } from './arrival.js';
import { BufferLease, SpareBuffers, MAX_SPARE_BYTES } from './spare-buffers.js';
import { assertJsonContent } from './content-type.js';
import { assertBodyDepth, BODY_FRAME_DEPTH, prunedBodyIfTooDeep } from './depth.js';
import { parseJson } from './parse-json.js';
import { readBody, type BodyTarget } from './read.js';
import { readVectorBodySliced } from './vector-reader.js';
import { SLICE_MS, Slices } from '../../limits/slices.js';
import { turnOwnerOf } from '../context.js';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { WasmBodyBuffer } from './wasm-body-buffer.js';

export { parseAddManyBody, parseBody } from './validate.js';

/** Bodies from this size take milliseconds to parse and to validate: each step gets a turn of the event loop. */
const LARGE_BODY_BYTES = 1024 * 1024;

declare module 'koa' {
  interface Request {
    /** The parsed JSON body (set by jsonBody). */
    body?: unknown;
  }
}

/** The most bytes of WasmBodyBuffers kept between requests. */
const WASM_BUFFERS_SPARE_TOTAL = 32 * 1024 * 1024;

export interface JsonBodyOptions {
  /** Add, add-many, search and search-many: read vectors straight into float32 (vector-reader.ts). */
  vectors?: boolean;
  /** The memory budget a body in flight is counted in (as its bytes arrive, arrival.ts). */
  budget?: MemoryBudget;
}

/**
 * Hold a body's bytes in the memory budget as they arrive (arrival.ts): a
 * first step before reading it (503 when it does not fit, nothing read), the
 * rest as the reader reports it.
 */
export function reserveBody(ctx: Context, budget: MemoryBudget | undefined, limit: number): BodyArrival | undefined {
  return BodyArrival.start(ctx, budget, limit);
}

/**
 * Parse a JSON body (415 for another content type or a compressed body, 400
 * for malformed JSON or UTF-8, 413 when too large). An empty body is {}.
 */
export function jsonBody(config: Config, options: JsonBodyOptions = {}): Middleware {
  const buffers = new SpareBuffers();
  // A WasmBodyBuffer holds a body and up to 0.75 of its size in floats (used only by base64 vectors).
  const wasmBuffers = options.vectors
    ? new SpareBuffers(
        (bytes) => new WasmBodyBuffer(loadKernelModule(), bytes),
        WasmBodyBuffer.bytesFor(MAX_SPARE_BYTES),
        WASM_BUFFERS_SPARE_TOTAL,
        MAX_WASM_BODY_BUFFERS,
      )
    : undefined;
  return async (ctx, next) => {
    assertJsonContent(ctx);
    const reservation = reserveBody(ctx, options.budget, config.maxBodyBytes);
    const target: BodyTarget = {
      lease: new BufferLease(buffers),
      wasmBuffers: wasmBuffers && new BufferLease(wasmBuffers),
      hold: reservation && ((n) => reservation.holdAtLeast(n)),
    };
    try {
      const bytes = await readBody(ctx, config.maxBodyBytes, target, reservation && ((n) => reservation.received(n)));
      reservation?.settle();
      // A large body's last bytes, its parsing and its validation each start a turn of their own.
      const large = bytes.length >= LARGE_BODY_BYTES;
      if (large) await nextTurn();
      const maxDepth = BODY_FRAME_DEPTH + config.maxJsonDepth;
      // The vector reader declines a value nested past its bound; the whole-body path scans the nesting first.
      const vectors =
        options.vectors &&
        (await readVectorBodySliced(bytes, target.lease, target.wasmBuffer, config.maxIdLength, new Slices(SLICE_MS, { owner: turnOwnerOf(ctx) })));
      const body = vectors || parseJson(await prunedBodyIfTooDeep(bytes, maxDepth));
      if (large) await nextTurn();
      assertBodyDepth(body, maxDepth);
      ctx.request.body = body;
      await next();
    } finally {
      target.lease.release();
      target.wasmBuffers?.release();
      reservation?.release();
    }
  };
}
