// Step 2: the body's bytes, within the size limit. A body of announced length
// from PREALLOCATE_FROM up goes into one spare buffer (read-into.ts): a
// vector body into a WasmBodyBuffer, where its base64 decodes in place; past
// MAX_SPARE_BYTES into a buffer that grows as its bytes arrive; one of
// unknown length chunk by chunk (read-into.ts); any other by raw-body.
import type { Context } from 'koa';
import getRawBody from 'raw-body';
import { ApiError, apiError } from '../../errors.js';
import { type BufferLease, MAX_SPARE_BYTES } from './spare-buffers.js';
import { type OnChunk, readChunks, readGrowing, readInto } from './read-into.js';
import { WasmBodyBuffer } from './wasm-body-buffer.js';

/** Bodies from this size up, with a Content-Length, are read into a spare buffer; smaller ones cost little either way. */
const PREALLOCATE_FROM = 64 * 1024;

/** Where a body read into one buffer goes: a buffer from `lease`, or for a vector body a WasmBodyBuffer from `wasmBuffers`. */
export interface BodyTarget {
  lease: BufferLease;
  wasmBuffers?: BufferLease<WasmBodyBuffer>;
  /** The WasmBodyBuffer the body was read into, if any. */
  wasmBuffer?: WasmBodyBuffer;
  /** Hears the capacity a body past the spare buffers' size grows to, before it is allocated (the memory budget counts it). */
  hold?: OnChunk;
}

/** The announced body length when the body can be read into one spare buffer, else null. */
function preallocatable(ctx: Context, length: string, limit: number): number | null {
  const n = Number(length);
  if (length === '' || !Number.isSafeInteger(n) || n < PREALLOCATE_FROM || n > limit) return null;
  // Anything unusual about the stream is left to raw-body, which reports it.
  return ctx.req.readable && ctx.req.readableEncoding === null ? n : null;
}

/** A buffer of `length` bytes (at most MAX_SPARE_BYTES) to read the body into. */
function bufferFor(target: BodyTarget, length: number): Buffer {
  // A WasmBodyBuffer when one is free (their number is capped: each is a WebAssembly memory), else an ordinary one.
  const wasmBuffer = target.wasmBuffers?.tryTake(WasmBodyBuffer.bytesFor(length));
  if (!wasmBuffer) return Buffer.from(target.lease.take(length), 0, length);
  target.wasmBuffer = wasmBuffer;
  return wasmBuffer.open(length);
}

/**
 * The request body as bytes: 413 past the limit, 400 when it ends early.
 * `onChunk` hears each chunk as it arrives (a small body read by raw-body: all
 * of it once read); what it throws ends the read.
 */
export async function readBody(ctx: Context, limit: number, target: BodyTarget, onChunk?: OnChunk): Promise<Buffer> {
  const length = ctx.get('content-length');
  try {
    const known = preallocatable(ctx, length, limit);
    // Past what the spare buffers keep, a buffer of its own that grows as the bytes arrive.
    if (known !== null && known > MAX_SPARE_BYTES) return await readGrowing(ctx.req, known, limit, onChunk, target.hold);
    if (known !== null) return await readInto(ctx.req, known, limit, bufferFor(target, known), onChunk);
    if (length === '' && ctx.req.readable && ctx.req.readableEncoding === null) return await readChunks(ctx.req, limit, onChunk);
    const bytes = await getRawBody(ctx.req, { limit, length: length === '' ? undefined : length });
    onChunk?.(bytes.length);
    return bytes;
  } catch (err) {
    if (err instanceof ApiError) throw err;
    const { type } = err as { type?: string };
    if (type === 'entity.too.large') throw apiError('PAYLOAD_TOO_LARGE', `the request body is larger than ${limit} bytes`, { limit });
    throw apiError('INVALID_JSON', `the request body could not be read: ${(err as Error).message}`);
  }
}
