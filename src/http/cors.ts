// Cross-origin access (@koa/cors): web pages on other origins call the API
// and load /sdk.js and /kernel.wasm. Tokens are bearer headers, never cookies,
// so `*` (the default) exposes nothing a page could not already ask for;
// CORS_ORIGINS narrows it to a list.
import cors from '@koa/cors';
import type { Context, Middleware } from 'koa';
import { corsOriginList, type Config } from '../config.js';

export const CORS_ALLOW_METHODS = ['GET', 'HEAD', 'POST'];
/** mcp-protocol-version: what an MCP client in a page sends to POST /mcp after it initialized. */
export const CORS_ALLOW_HEADERS = ['authorization', 'content-type', 'mcp-protocol-version'];
/** Response headers a page may read besides the CORS-safelisted ones. */
export const CORS_EXPOSE_HEADERS = ['Server-Timing', 'Retry-After', 'RateLimit', 'RateLimit-Policy', 'WWW-Authenticate', 'x-tempvec-instance'];
/** Seconds a browser may cache a preflight (Chromium caps it at 7200). */
export const CORS_MAX_AGE = 7200;

export function corsMiddleware(config: Config): Middleware {
  const list = corsOriginList(config.corsOrigins);
  const allowed = new Set(list);
  // An origin not in the list gets no Access-Control-Allow-Origin: the browser refuses the answer.
  const origin = list[0] === '*' ? '*' : (ctx: Context) => (allowed.has(ctx.get('Origin')) ? ctx.get('Origin') : '');
  const handle = cors({
    origin,
    allowMethods: CORS_ALLOW_METHODS,
    allowHeaders: CORS_ALLOW_HEADERS,
    exposeHeaders: CORS_EXPOSE_HEADERS,
    maxAge: CORS_MAX_AGE,
  });
  return async (ctx, next) => {
    // Lets pages read Server-Timing through the Resource Timing API too.
    const granted = origin === '*' ? '*' : origin(ctx);
    if (granted) ctx.set('Timing-Allow-Origin', granted);
    await handle(ctx, next);
  };
}
