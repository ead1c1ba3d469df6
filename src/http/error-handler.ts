// The one place errors become responses. Anything thrown below is answered
// as { success: false, error: { code, message, details? } }; an unknown error
// is logged and answered 500 INTERNAL_ERROR without its internals.
import type { Middleware } from 'koa';
import { ApiError, apiError } from '../errors.js';
import { isWasmAllocationFailure } from '../limits/wasm-memories.js';

export function toApiError(err: unknown): ApiError {
  if (err instanceof ApiError) return err;
  const status = (err as { status?: number })?.status;
  // Errors raised by Koa itself or its body parser carry a status.
  if (status === 413) return apiError('PAYLOAD_TOO_LARGE', 'the request body is larger than the limit');
  if (status === 415) return apiError('UNSUPPORTED_MEDIA_TYPE', 'unsupported content encoding or type');
  if (status === 405) return apiError('METHOD_NOT_ALLOWED', 'method not allowed on this route');
  if (status === 404) return apiError('NOT_FOUND', 'no such route');
  if (status === 400 && (err as { type?: string }).type !== undefined) return apiError('INVALID_JSON', 'the request body could not be read');
  // new WebAssembly.Memory or memory.grow found no address space or memory left.
  if (isWasmAllocationFailure(err)) {
    console.error(`tempvec: could not reserve WebAssembly memory: ${(err as Error).message}`);
    return apiError('SERVER_AT_CAPACITY', 'the server could not reserve memory for this request; try again later', undefined, { 'Retry-After': '60' });
  }
  console.error(err);
  return apiError('INTERNAL_ERROR', 'internal error');
}

export function errorHandler(): Middleware {
  return async (ctx, next) => {
    try {
      await next();
      // The router leaves these statuses without a body (and sets Allow on 405/501).
      if (ctx.body == null && ctx.status === 404) {
        throw apiError('NOT_FOUND', `no route ${ctx.method} ${ctx.path}; see GET / for the list`);
      }
      if (ctx.body == null && (ctx.status === 405 || ctx.status === 501)) {
        throw apiError('METHOD_NOT_ALLOWED', `${ctx.path} does not take ${ctx.method}; allowed: ${ctx.response.get('Allow')}`);
      }
    } catch (caught) {
      const err = toApiError(caught);
      ctx.status = err.status;
      for (const [name, value] of Object.entries(err.headers ?? {})) ctx.set(name, value);
      if (err.status === 401) ctx.set('WWW-Authenticate', `Bearer realm="tempvec", error="invalid_token"`);
      const error: Record<string, unknown> = { code: err.code, message: err.message };
      if (err.details !== undefined) error.details = err.details;
      ctx.body = { success: false, error };
    }
  };
}
