// Routes that take no body (POST /token, /index/reset, /vectors/clear)
// refuse one rather than ignore it, as their OpenAPI operations say: a
// client sending one has likely picked the wrong route.
import type { Middleware } from 'koa';
import { apiError } from '../../errors.js';

/** 400 VALIDATION_ERROR when the request has a body (Content-Length above 0, or chunked); Content-Length: 0 is no body. */
export const noBody: Middleware = (ctx, next) => {
  const { headers } = ctx.req;
  const length = headers['content-length'];
  if (headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0')) {
    const message = `${ctx.method} ${ctx.path} takes no body`;
    throw apiError('VALIDATION_ERROR', `invalid request body: /: ${message}`, { issues: [{ path: '', message }] });
  }
  return next();
};
