// createApp builds the Koa application without listening (src/server.ts
// listens; tests drive the app in process). Its middleware is REQUEST_PATH,
// in that order; docs/lifecycle.md's table of the request path is generated
// from it (npm run docs), and a test fails when they differ.
import Router, { type RouterContext } from '@koa/router';
import Koa, { type DefaultState, type Middleware } from 'koa';
import { backendFor, loadConfig, registerEmbeddingModel, servedEmbeddingModel, type Config } from '../config.js';
import { EmbeddingPool } from '../embedding/embedding-pool.js';
import { OpenAiEmbedder } from '../embedding/openai-embedder.js';
import { KernelPool } from '../kernel/kernel-pool.js';
import { loadKernelModule, loadSharedKernelModule } from '../kernel/load-node.js';
import { requestSchemas } from '../schemas/index.js';
import { SessionStore, type Clock } from '../sessions/session-store.js';
import { requireSession } from './auth.js';
import { BodyAdmission } from './admission.js';
import { ImportSlots } from './import-slots.js';
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
import { modelFileRoutes } from './routes/model-files.js';
import { healthRoutes } from './routes/health.js';
import { Readiness } from './readiness.js';
import { embedRoutes } from './routes/embed.js';
import { mcpRoutes } from './routes/mcp.js';
import { metaRoutes } from './routes/meta.js';
import { overviewRoutes } from './routes/overview.js';
import { searchRoutes } from './routes/search.js';
import { sessionRoutes } from './routes/session.js';
import { vectorRoutes } from './routes/vectors.js';
import { respond } from './respond.js';
import type { ServiceMetrics } from '../metrics/service-metrics.js';

/** What the steps of the request path are made from, once per app. */
interface AppParts {
  config: Config;
  metrics: ServiceMetrics;
  admission: BodyAdmission;
  router: Router;
}

/** One step of the request path: a middleware, where it lives, and what it may answer. */
export interface RequestStep {
  name: string;
  /** The module that makes it. */
  file: string;
  /** What it may answer or add to every answer (docs/lifecycle.md). */
  answers: string;
  /** Its middleware (typed for the router's context, which the routes and allowed methods read), or null where the configuration leaves it out. */
  make(parts: AppParts): Middleware<DefaultState, RouterContext> | null;
}

/** The request path, outermost first: each request goes down it, and its answer back up. */
export const REQUEST_PATH: readonly RequestStep[] = [
  {
    name: 'metrics',
    file: 'src/metrics/service-metrics.ts',
    answers: 'nothing; on the way back counts the answer by route and status, and its latency (`GET /metrics`)',
    make: ({ metrics }) => metrics.middleware,
  },
  {
    name: 'instance header',
    file: 'src/http/instance-header.ts',
    answers: 'nothing; sets `x-tempvec-instance` on every answer (only with `INSTANCE_ID`)',
    make: ({ config }) => (config.instanceId !== '' ? instanceHeader(config.instanceId) : null),
  },
  {
    name: 'CORS',
    file: 'src/http/cors.ts',
    answers: 'a preflight (`OPTIONS`) itself, 204 with the allowed methods and headers; CORS headers on every other answer',
    make: ({ config }) => corsMiddleware(config),
  },
  {
    name: 'respond',
    file: 'src/http/respond.ts',
    answers: 'writes every JSON answer: the one a route made with `reply()`, or the error body, with `metrics` and `Server-Timing`; streams large ones',
    make: () => respond,
  },
  {
    name: 'errors',
    file: 'src/http/error-handler.ts',
    answers:
      'every error: whatever is thrown below becomes `{ success: false, error }` with its status; 404 `NOT_FOUND`, 405 `METHOD_NOT_ALLOWED`, 500 `INTERNAL_ERROR`',
    make: () => errorHandler(),
  },
  {
    name: 'admission',
    file: 'src/http/admission.ts',
    answers:
      'a request with a body past the caps on bodies in flight, before it is read: 503 `SERVER_AT_CAPACITY`, 429 `RATE_LIMITED` (per token hash); then, as its bytes arrive, 503 past the bytes in flight and 408 `REQUEST_TIMEOUT` for a body arriving too slowly',
    make: ({ admission }) => admission.middleware,
  },
  {
    name: 'routes',
    file: 'src/http/routes/*.ts',
    answers: "the route's answer (`reply()`); each route runs auth (401), its rate limit (429), the body pipeline (413, 415, 400) and validation (400) first",
    make: ({ router }) => router.routes(),
  },
  {
    name: 'allowed methods',
    file: '@koa/router',
    answers: 'a path that exists with other methods: 405 or 501 and `Allow`, made `METHOD_NOT_ALLOWED` by errors',
    make: ({ router }) => router.allowedMethods(),
  },
];

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
  const backend = backendFor(config.kernelBuild);
  const pool = config.kernelThreads > 1 ? new KernelPool(config.kernelThreads, loadSharedKernelModule(backend)) : null;
  const store = new SessionStore(config, pool ? loadSharedKernelModule(backend) : loadKernelModule(backend), options.now, !options.deferRestore, { pool });
  const embeddingPool = new EmbeddingPool(
    {
      threads: config.embeddingThreads,
      textsInFlight: config.embeddingTextsInFlight,
      textsInFlightPerToken: config.embeddingTextsInFlightPerToken,
    },
    (bytes, message, thread) => store.ledger.reserveEmbedding(bytes, message, thread),
  );
  const endpoint = endpointEmbedder(config);
  const embedder = endpoint ?? embeddingPool;
  if (config.embeddingPreload === 1 && embedder === embeddingPool) embeddingPool.warm();
  const readiness = new Readiness(store);
  const metrics = serviceMetrics(config, store, embeddingPool, endpoint);
  const router = new Router();
  const limitSession = sessionRateLimit(config, store.now);
  const imports = new ImportSlots(config);
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
    importSlots: imports.middleware,
    readiness,
    metrics: metrics.registry,
    embedder,
  };
  metaRoutes(deps);
  sessionRoutes(deps);
  vectorRoutes(deps);
  searchRoutes(deps);
  embedRoutes(deps);
  listingRoutes(deps);
  transferRoutes(deps);
  assetRoutes(deps);
  modelFileRoutes(deps);
  overviewRoutes(deps);
  healthRoutes(deps);
  mcpRoutes(deps);

  const admission = new BodyAdmission(config);
  const app = new Koa();
  // Behind the cluster's nginx, which overwrites X-Forwarded-For with the client's address (the one entry read).
  app.proxy = config.trustProxy !== 0;
  app.maxIpsCount = 1;
  for (const step of REQUEST_PATH) {
    const middleware = step.make({ config, metrics, admission, router });
    if (middleware) app.use(middleware);
  }
  // Koa logs errors its handler did not catch; ours catches them all.
  app.silent = true;
  // `embedder`: the builtin model's pool (tests stop its threads); `textEmbedder`: what embeds, it or the endpoint.
  return { app, store, config, readiness, admission, imports, pool, embedder: embeddingPool, textEmbedder: embedder, restore: () => store.restore() };
}

/** With EMBEDDING_URL: the endpoint as the server's model, made known to sessions by its name and dimension. */
function endpointEmbedder(config: Config): OpenAiEmbedder | null {
  if (!config.embeddingUrl) return null;
  const model = servedEmbeddingModel(config);
  registerEmbeddingModel(model);
  return new OpenAiEmbedder({
    url: config.embeddingUrl,
    model: model.name,
    apiKey: config.embeddingApiKey || undefined,
    dimensions: model.dimensions,
    timeoutMs: config.embeddingTimeoutMs,
    attempts: config.embeddingAttempts,
    batchTexts: config.embeddingBatchTexts,
    textsInFlight: config.embeddingTextsInFlight,
    textsInFlightPerToken: config.embeddingTextsInFlightPerToken,
  });
}
