// GET /healthz, GET /readyz and GET /metrics: for nginx, orchestrators and
// Prometheus. They reveal counts and timings, never a token, id or metadata;
// with METRICS_TOKEN set, /metrics answers only its holder.
import { timingSafeEqual } from 'node:crypto';
import type { Context } from 'koa';
import { apiError } from '../../errors.js';
import { hashToken } from '../../sessions/token.js';
import { bearerToken } from '../auth.js';
import { reply, type RouteDeps } from '../context.js';

/** 401 unless the request carries `Bearer <expected>` ('' expects nothing); compared as hashes, in constant time. */
function assertMetricsToken(ctx: Context, expected: string): void {
  if (expected === '') return;
  const given = bearerToken(ctx.req.headers.authorization);
  if (given !== undefined && timingSafeEqual(Buffer.from(hashToken(given), 'hex'), Buffer.from(hashToken(expected), 'hex'))) return;
  throw apiError('UNAUTHORIZED', 'GET /metrics needs Authorization: Bearer <METRICS_TOKEN>');
}

export function healthRoutes({ router, readiness, metrics, config }: RouteDeps): void {
  router.get('/healthz', (ctx) => {
    reply(ctx, { status: 'ok' });
  });

  router.get('/readyz', (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    const checks = readiness.checks();
    if (!readiness.ready) {
      const why = checks.shuttingDown ? 'shutting down' : 'restoring its sessions from disk';
      throw apiError('INSTANCE_UNAVAILABLE', `this instance is not ready: ${why}`, { checks }, { 'Retry-After': '1' });
    }
    reply(ctx, { status: 'ready', checks });
  });

  router.get('/metrics', async (ctx) => {
    ctx.set('Cache-Control', 'no-store');
    assertMetricsToken(ctx, config.metricsToken);
    const text = await metrics.metrics();
    ctx.type = metrics.contentType;
    ctx.status = 200;
    ctx.body = text;
  });
}
