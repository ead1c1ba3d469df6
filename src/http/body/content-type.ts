// Step 1: only JSON bodies, sent uncompressed.
import type { Context } from 'koa';
import { apiError } from '../../errors.js';

/** 415 for a body (or a content-type) other than application/json, or a compressed body. */
export function assertJsonContent(ctx: Context): void {
  const hasBody = Number(ctx.get('content-length') || 0) > 0 || ctx.get('transfer-encoding') !== '';
  if (!ctx.is('application/json') && (hasBody || ctx.get('content-type') !== '')) {
    throw apiError('UNSUPPORTED_MEDIA_TYPE', 'send the body as JSON with content-type: application/json', {
      contentType: ctx.get('content-type') || null,
    });
  }
  const encoding = ctx.get('content-encoding');
  if (encoding !== '' && encoding.toLowerCase() !== 'identity') {
    throw apiError('UNSUPPORTED_MEDIA_TYPE', `content-encoding ${encoding} is not accepted; send the body uncompressed`);
  }
}
