// createApp builds the Koa application without listening (src/server.ts
// listens; tests drive the app in process).
//
// Request flow: metrics -> instance header -> CORS (answers preflights) -> timings -> error handler -> router (auth, JSON body and
// validation per route) -> allowed methods.
import Router from '@koa/router';
import Koa from 'koa';
import { loadConfig, type Config } from '../config.js';
import { KernelPool } from '../kernel/kernel-pool.js';
import { loadKernelModule, loadSharedKernelModule } from '../kernel/load-node.js';
import { requestSchemas } from '../schemas/index.js';
import { SessionStore, type Clock } from '../sessions/session-store.js';
import { requireSession } from './auth.js';
import { BodyAdmission } from './admission.js';
import { jsonBody } from './body/index.js';
import { corsMiddleware } from './cors.js';
import { sessionRateLimit, tokenRateLimit } from './rate-limit.js';
import type { RouteDeps } from './context.js';
import { errorHandler } from './error-handler.js';
import { serviceMetrics } from '../metrics/service-metrics.js';
import { instanceHeader } from './instance-header.js';
import { listingRoutes } from './routes/listing.js';
import { transferRoutes } from './routes/transfer.js';
import { assetRoutes } from './routes/assets.js';
import { healthRoutes, Readiness } from './routes/health.js';
import { metaRoutes } from './routes/meta.js';
import { overviewRoutes } from './routes/overview.js';
import { searchRoutes } from './routes/search.js';
import { sessionRoutes } from './routes/session.js';
import { vectorRoutes } from './routes/vectors.js';
import { timingsMiddleware } from './timings.js';

export interface AppOptions {
  config?: Config;
  /** Injected clock, for tests of expiry. */
  now?: Clock;
  /** List the sessions on disk later, with restore() (the server listens first, so /readyz can say it is not ready). */
  deferRestore?: boolean;
}

export function createApp(options: AppOptions = {}) {
  const config = options.config ?? loadConfig();
  // More than one kernel thread: session memories are shared, so the pool's threads can read them.
  const pool = config.kernelThreads > 1 ? new KernelPool(config.kernelThreads, loadSharedKernelModule()) : null;
  const store = new SessionStore(config, pool ? loadSharedKernelModule() : loadKernelModule(), options.now, !options.deferRestore, { pool });
  const readiness = new Readiness(store);
  readiness.kernelCompiled = true; // loadKernelModule() compiled it, or threw
  const metrics = serviceMetrics(config, store);
  const router = new Router();
  const limitSession = sessionRateLimit(config, store.now);
  const deps: RouteDeps = {
    router,
    config,
    store,
    schemas: requestSchemas(config),
    json: jsonBody(config, { budget: store.budget }),
    vectorJson: jsonBody(config, { vectors: true, budget: store.budget }),
    auth: requireSession(store, limitSession),
    authWithoutDbOpenMs: requireSession(store, limitSession, null),
    tokenRateLimit: tokenRateLimit(config, store.now),
    readiness,
    metrics: metrics.registry,
  };
  metaRoutes(deps);
  sessionRoutes(deps);
  vectorRoutes(deps);
  searchRoutes(deps);
  listingRoutes(deps);
  transferRoutes(deps);
  assetRoutes(deps);
  overviewRoutes(deps);
  healthRoutes(deps);

  const admission = new BodyAdmission(config);
  const app = new Koa();
  // Behind the cluster's nginx, which overwrites X-Forwarded-For with the client's address (the one entry read).
  app.proxy = config.trustProxy !== 0;
  app.maxIpsCount = 1;
  app.use(metrics.middleware);
  if (config.instanceId !== '') app.use(instanceHeader(config.instanceId));
  app.use(corsMiddleware(config));
  app.use(timingsMiddleware);
  app.use(errorHandler());
  app.use(admission.middleware);
  app.use(router.routes());
  // Sets 405/501 with an Allow header; the error handler turns it into METHOD_NOT_ALLOWED.
  app.use(router.allowedMethods());
  // Koa logs errors its handler did not catch; ours catches them all.
  app.silent = true;
  return { app, store, config, readiness, admission, pool, restore: () => store.restore() };
}
