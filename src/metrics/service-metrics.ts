// Prometheus metrics of one app, in a registry of its own (not prom-client's
// global one), so several apps in one process keep separate figures. Labels
// are route patterns, statuses and error codes: never a token, id or metadata.
import type { Middleware } from 'koa';
import { Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Config } from '../config.js';
import type { EmbeddingPool } from '../embedding/embedding-pool.js';
import type { OpenAiEmbedder } from '../embedding/openai-embedder.js';
import type { KernelPool } from '../kernel/kernel-pool.js';
import type { SessionStore } from '../sessions/session-store.js';
import { sharedEventLoopDelay } from './event-loop-delay.js';

/** Seconds; from a cached /limits answer to a search over a full session. */
const LATENCY_BUCKETS = [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5];

/** Timings (ctx.state.timings) of the steps that run the search kernel, by operation label. */
const KERNEL_STEPS: Record<string, string> = { searchMs: 'search', searchManyMs: 'search-many' };

export interface ServiceMetrics {
  registry: Registry;
  /** Counts and times every request; the outermost middleware. */
  middleware: Middleware;
}

export function serviceMetrics(config: Config, store: SessionStore, embedder?: EmbeddingPool, endpoint?: OpenAiEmbedder | null): ServiceMetrics {
  const registry = new Registry();
  const registers = [registry];
  const requests = new Counter({
    name: 'tempvec_http_requests_total',
    help: 'Requests answered, by method, route pattern and status.',
    labelNames: ['method', 'route', 'status'] as const,
    registers,
  });
  const latency = new Histogram({
    name: 'tempvec_http_request_duration_seconds',
    help: "Time from the request's arrival to its answer, by method and route pattern.",
    labelNames: ['method', 'route'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  const errors = new Counter({
    name: 'tempvec_http_errors_total',
    help: 'Error answers, by error code.',
    labelNames: ['code'] as const,
    registers,
  });
  const rateLimited = new Counter({
    name: 'tempvec_rate_limited_requests_total',
    help: 'Requests refused with 429 RATE_LIMITED (per address on POST /token, per token elsewhere).',
    registers,
  });
  const rejected = new Counter({
    name: 'tempvec_rejected_requests_total',
    help: 'Requests refused with 503 (session cap, memory budget, disk, restoring or shutting down), by error code.',
    labelNames: ['code'] as const,
    registers,
  });
  const kernel = new Histogram({
    name: 'tempvec_kernel_seconds',
    help: 'Time of the search step (kernel scan and selection) of answered /search and /search-many requests.',
    labelNames: ['operation'] as const,
    buckets: LATENCY_BUCKETS,
    registers,
  });
  gauge(registry, 'tempvec_sessions', 'Live sessions (those on disk waiting to be reopened included).', () => store.size);
  total(
    registry,
    'tempvec_log_tails_cut_total',
    'DATA_DIR: session reopens that cut a torn or damaged tail off the log (point-in-time recovery after a crash or power loss).',
    () => store.journalCounts().tailsCut,
  );
  total(
    registry,
    'tempvec_log_records_cut_total',
    'DATA_DIR: whole log records found after such damage and cut with it (with FSYNC=never, changes a power loss took).',
    () => store.journalCounts().recordsCut,
  );
  total(
    registry,
    'tempvec_logs_set_aside_total',
    'DATA_DIR: session logs set aside as .corrupt (a record that was on stable storage is damaged).',
    () => store.journalCounts().setAside,
  );
  total(
    registry,
    'tempvec_logs_other_format_total',
    'DATA_DIR: session logs set aside as .other-format (not version 2 of the tempvec log format), never read.',
    () => store.journalCounts().otherFormat,
  );
  gauge(
    registry,
    'tempvec_data_dir_bytes',
    'DATA_DIR: bytes of its files as the journal counts them (logs, files set aside, compactions under way); DATA_DIR_MAX_BYTES caps them.',
    () => store.dataDirBytes(),
  );
  gauge(
    registry,
    'tempvec_persistence_buffer_bytes',
    'DATA_DIR: buffers of session logs being reopened or compacted (PERSISTENCE_JOBS at a time), counted in the memory budget.',
    () => store.budget.persistenceBytes,
  );
  gauge(registry, 'tempvec_sessions_max', 'MAX_SESSIONS.', () => config.maxSessions);
  // Recounting every session costs a pass over them all: once per USAGE_CACHE_MS at most, however often anyone scrapes.
  const usage = cached(() => ({ vectors: store.vectorCount(), ...store.memoryUsage() }));
  gauge(registry, 'tempvec_vectors', 'Vectors stored in the sessions in memory.', () => usage().vectors);
  gauge(registry, 'tempvec_linear_memory_bytes', 'Linear memory of all sessions together.', () => usage().linearMemoryBytes);
  gauge(
    registry,
    'tempvec_metadata_bytes',
    'Metadata stores of all sessions (bytes, row tables, filter indexes), outside the JS heap, as allocated.',
    () => usage().metadataBytes,
  );
  gauge(registry, 'tempvec_heap_bytes', "Estimated JS heap of all sessions' ids.", () => usage().heapBytes);
  gauge(registry, 'tempvec_memory_budget_bytes', 'MEMORY_BUDGET_BYTES (0: no budget).', () => config.memoryBudgetBytes);
  gauge(registry, 'tempvec_memory_budget_used_ratio', 'Linear memory over the memory budget (0 without a budget).', () =>
    config.memoryBudgetBytes === 0 ? 0 : usage().linearMemoryBytes / config.memoryBudgetBytes,
  );
  eventLoopGauges(registry, config.metricsWindowMs);
  kernelPoolMetrics(registry, config, store.searches.pool);
  if (embedder) embeddingPoolMetrics(registry, embedder);
  if (endpoint) embeddingEndpointMetrics(registry, endpoint);

  const middleware: Middleware = async (ctx, next) => {
    const start = performance.now();
    try {
      await next();
    } finally {
      // The router's pattern, never the raw path (which could carry anything a caller sent).
      const route = (ctx as { _matchedRoute?: string })._matchedRoute ?? 'unmatched';
      const status = ctx.status;
      requests.inc({ method: ctx.method, route, status: String(status) });
      latency.observe({ method: ctx.method, route }, (performance.now() - start) / 1000);
      const code = errorCodeOf(ctx.body);
      if (code) {
        errors.inc({ code });
        if (status === 429) rateLimited.inc();
        if (status === 503) rejected.inc({ code });
      }
      const entries = (ctx.state as { timings?: { entries: Record<string, number> } }).timings?.entries;
      if (entries && status < 300) {
        for (const [step, operation] of Object.entries(KERNEL_STEPS)) {
          if (entries[step] !== undefined) kernel.observe({ operation }, entries[step] / 1000);
        }
      }
    }
  };
  return { registry, middleware };
}

/** Figures that recount every session are computed at most this often, however often /metrics is scraped. */
export const USAGE_CACHE_MS = 1000;

/** `read`, computed again only once its last value is USAGE_CACHE_MS old. */
function cached<T>(read: () => T): () => T {
  let at = -Infinity;
  let value: T;
  return () => {
    const t = performance.now();
    if (t - at >= USAGE_CACHE_MS) {
      value = read();
      at = t;
    }
    return value;
  };
}

/** A gauge read when /metrics is scraped. */
function gauge(registry: Registry, name: string, help: string, read: () => number): void {
  new Gauge({
    name,
    help,
    registers: [registry],
    collect() {
      this.set(read());
    },
  });
}

/** The kernel pool: its size, calls waiting and running, calls run, threads replaced (a thread that died). */
function kernelPoolMetrics(registry: Registry, config: Config, pool: KernelPool | null): void {
  gauge(registry, 'tempvec_kernel_threads', 'KERNEL_THREADS: threads that run large searches (1: all on the event loop).', () => config.kernelThreads);
  gauge(registry, 'tempvec_kernel_pool_queued_jobs', 'Jobs of kernel calls waiting for a pool thread.', () => pool?.queued ?? 0);
  gauge(registry, 'tempvec_kernel_pool_running_jobs', 'Jobs of kernel calls running on pool threads.', () => pool?.running ?? 0);
  total(registry, 'tempvec_kernel_pool_jobs_total', "Jobs (kernel calls run in order on one thread) the pool's threads have run.", () => pool?.jobsRun ?? 0);
  total(
    registry,
    'tempvec_kernel_threads_replaced_total',
    'Pool threads that died (out of memory, a fault) and were replaced; their searches got 503 KERNEL_THREAD_FAILED.',
    () => pool?.threadsReplaced ?? 0,
  );
}

/** The embedding threads: started, texts in flight, jobs run, threads replaced. */
function embeddingPoolMetrics(registry: Registry, pool: EmbeddingPool): void {
  gauge(registry, 'tempvec_embedding_threads', 'Embedding threads started (each holds the model; EMBEDDING_THREADS at most).', () => pool.size);
  gauge(registry, 'tempvec_embedding_texts_in_flight', 'Texts being embedded or waiting for an embedding thread.', () => pool.textsInFlight);
  total(registry, 'tempvec_embedding_jobs_total', 'Jobs (a few texts each) the embedding threads have run.', () => pool.jobsRun);
  total(
    registry,
    'tempvec_embedding_threads_replaced_total',
    'Embedding threads that died (out of memory, a fault, or could not load the model); their texts got 503 EMBEDDING_UNAVAILABLE.',
    () => pool.threadsReplaced,
  );
}

function embeddingEndpointMetrics(registry: Registry, endpoint: OpenAiEmbedder): void {
  gauge(
    registry,
    'tempvec_embedding_endpoint_texts_in_flight',
    'Texts being embedded by the EMBEDDING_URL endpoint or waiting for it.',
    () => endpoint.textsInFlight,
  );
  total(registry, 'tempvec_embedding_endpoint_requests_total', 'Requests sent to the EMBEDDING_URL endpoint, retries included.', () => endpoint.requestsSent);
  total(
    registry,
    'tempvec_embedding_endpoint_failures_total',
    'Batches the EMBEDDING_URL endpoint failed after its tries: answered 502 EMBEDDING_UPSTREAM_ERROR or 503 EMBEDDING_UNAVAILABLE.',
    () => endpoint.batchesFailed,
  );
}

/** A counter read from a running total kept elsewhere. */
function total(registry: Registry, name: string, help: string, read: () => number): void {
  let counted = 0;
  new Counter({
    name,
    help,
    registers: [registry],
    collect() {
      const now = read();
      this.inc(now - counted);
      counted = now;
    },
  });
}

/**
 * Event-loop delay over the last METRICS_WINDOW_MS (event-loop-delay.ts): the
 * p99 and the longest, which is about the longest time the main thread was
 * held. A scrape reads the window and resets nothing, so any number of
 * scrapers (or callers) see the same figures.
 */
function eventLoopGauges(registry: Registry, windowMs: number): void {
  const rolling = sharedEventLoopDelay(windowMs);
  const seconds = Math.round(windowMs / 1000);
  gauge(
    registry,
    'tempvec_event_loop_delay_max_seconds',
    `Longest event-loop delay in the last ${seconds} s (METRICS_WINDOW_MS; about the longest time the main thread was held).`,
    () => rolling.read().max / 1000,
  );
  gauge(
    registry,
    'tempvec_event_loop_delay_p99_seconds',
    `Highest p99 of the event-loop delay (1 ms timer) of any 1 s slice in the last ${seconds} s.`,
    () => rolling.read().p99 / 1000,
  );
}

/** The `error.code` of an error envelope (the error handler leaves it as an object). */
function errorCodeOf(body: unknown): string | undefined {
  if (!body || typeof body !== 'object' || Buffer.isBuffer(body)) return undefined;
  const error = (body as { error?: { code?: unknown } }).error;
  return typeof error?.code === 'string' ? error.code : undefined;
}
