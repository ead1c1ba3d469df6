// GET /healthz, GET /readyz and GET /metrics: for nginx, orchestrators and
// Prometheus. Unauthenticated; they reveal counts and timings, never a token,
// id or metadata.
import { apiError } from '../../errors.js';
import { reply, type RouteDeps } from '../context.js';

export function healthRoutes({ router, readiness, metrics }: RouteDeps): void {
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
    const text = await metrics.metrics();
    ctx.type = metrics.contentType;
    ctx.status = 200;
    ctx.body = text;
  });
}
