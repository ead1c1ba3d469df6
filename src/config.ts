// Every limit and default of the service, read from the environment once.
// GET /limits, request validation, the OpenAPI document and the README table
// all read this module, so a limit is written down in exactly one place.
import { relaxedSimdSupported } from './kernel/relaxed-simd.js';

export type Metric = 'cosine' | 'l2';
export const METRICS = ['cosine', 'l2'] as const;
export const VECTOR_TYPES = ['float32', 'int8'] as const;
export type VectorType = (typeof VECTOR_TYPES)[number];
/** How a session's texts become terms (src/index/text/analyzer.ts); fixed by the first add that names one or carries text. */
export const ANALYZERS = ['standard', 'english'] as const;
export type AnalyzerName = (typeof ANALYZERS)[number];
/** KERNEL_BUILD: which kernel build answers searches. */
export const KERNEL_BUILDS = ['auto', 'simd128', 'relaxed'] as const;
export type KernelBuild = (typeof KERNEL_BUILDS)[number];
/** The builds as sessions, /limits and LocalIndex name them. */
export const BACKENDS = ['wasm-simd128', 'wasm-relaxed-simd'] as const;
export type Backend = (typeof BACKENDS)[number];
export const FSYNC_MODES = ['never', 'always'] as const;
export type FsyncMode = (typeof FSYNC_MODES)[number];

/** With DATA_DIR: bytes of a session log read or copied at once by a reopen or a compaction. */
export const PERSISTENCE_CHUNK_BYTES = 4 * 1024 * 1024;
/**
 * Buffers one reopen, compaction or rewrite holds (PERSISTENCE_JOBS run at
 * once), counted in the memory budget: a chunk read and a chunk copied or read
 * back. A record larger than a chunk gets a buffer of its own, and a
 * compaction keeps copies of rows changed under it (16 MiB at most).
 */
export const PERSISTENCE_JOB_BUFFER_BYTES = 2 * PERSISTENCE_CHUNK_BYTES;
const MiB = 1024 * 1024;

/** Fixed by the spec; not configurable. */
export const SPEC_LIMITS = {
  maxDimensions: 1024,
  minTopK: 1,
  maxTopK: 100,
  defaultTopK: 10,
  minCandidatePool: 1,
  maxCandidatePool: 2048,
  defaultCandidatePool: 100,
  defaultMetric: 'cosine' as Metric,
  defaultVectorType: 'float32' as VectorType,
  /**
   * Largest magnitude of one vector component. Bounding it keeps every sum of
   * squares of a 1024-dimension vector finite in float32, so no score is ever
   * Infinity or NaN.
   */
  maxAbsComponent: 1e16,
  /** Nesting of $and/$or/$not in one filter (bounds the recursion a request can cause). */
  maxFilterDepth: 32,
  /**
   * UTF-8 bytes of the longest metadata string (or object's or array's
   * canonical JSON) the filter index keeps as a key; longer ones are keyed by
   * a hash, and filters on them read the few rows under it.
   */
  maxIndexedValueBytes: 256,
  /** A body announcing at most this many bytes is admitted in the small bodies' lane (MAX_SMALL_BODIES_IN_FLIGHT): parsed in well under a ms. */
  smallBodyBytes: 64 * 1024,
  /** Vectors per page of POST /vectors/list. */
  minListLimit: 1,
  maxListLimit: 1000,
  defaultListLimit: 100,
  /** Analyzer of a session's texts until its first text fixes one. */
  defaultAnalyzer: 'standard' as AnalyzerName,
  /** BM25 as Lucene (>= 8) scores it: term-frequency saturation and length normalisation. */
  bm25K1: 1.2,
  bm25B: 0.75,
  /** UTF-8 bytes of one query text (a question, not a document). */
  maxQueryTextBytes: 4096,
  /** UTF-8 bytes of all of a request's query texts: 64 KiB of Cyrillic analyse in ~23 ms (the slowest script), the most a rare re-analysis in the turn can hold the loop. */
  maxQueryTextBytesPerRequest: 64 * 1024,
  /** Hybrid search's fusions: RRF's k, and linear's weight of the vector arm. */
  defaultRrfK: 60,
  maxRrfK: 10_000,
  defaultLinearAlpha: 0.5,
  /** Largest MAX_TEXT_BYTES (it bounds one text's analysis, and a term's count in it). */
  maxTextBytesCap: 1024 * 1024,
  /** Imports of one token at once (a session's writes take turns anyway). */
  maxImportsInFlightPerToken: 1,
  /** The share of MEMORY_BUDGET_BYTES stored data may take; the rest stays for requests in flight, so reads answer when writers have filled theirs. */
  storedShareOfBudget: 0.9,
} as const;

/** Bytes of MEMORY_BUDGET_BYTES stored data may take (0: no budget). */
export function memoryStoredMaxBytes(memoryBudgetBytes: number): number {
  return Math.floor(memoryBudgetBytes * SPEC_LIMITS.storedShareOfBudget);
}

export interface Config {
  port: number;
  host: string;
  sessionTtlMs: number;
  /** How often expired sessions are swept; derived from the TTL unless set. */
  sweepIntervalMs: number;
  /** How long the token of an expired session still answers SESSION_EXPIRED. */
  expiredTokenMemoryMs: number;
  maxVectorsPerSession: number;
  maxSessions: number;
  maxAddManyBatch: number;
  maxGetManyBatch: number;
  maxDeleteManyBatch: number;
  maxSearchManyBatch: number;
  maxIdLength: number;
  maxMetadataBytes: number;
  maxTextBytes: number;
  maxBodyBytes: number;
  maxJsonDepth: number;
  maxMetadataKeys: number;
  maxFilterKeys: number;
  maxFilterNodes: number;
  tokenRatePerMin: number;
  requestRatePerSec: number;
  memoryBudgetBytes: number;
  dataDir: string;
  fsync: FsyncMode;
  /** `*`, or a comma-separated list of origins (src/http/cors.ts). */
  corsOrigins: string;
  instanceId: string;
  trustProxy: number;
  maxImportBytes: number;
  maxConnections: number;
  maxBodiesInFlight: number;
  maxBodiesInFlightPerToken: number;
  maxBodyBytesInFlight: number;
  maxSmallBodiesInFlight: number;
  maxBodiesInFlightPerAddress: number;
  maxImportsInFlight: number;
  maxSessionsPerAddress: number;
  /** Bearer token GET /metrics requires; '' leaves it open. */
  metricsToken: string;
  metricsWindowMs: number;
  headersTimeoutMs: number;
  bodyGraceMs: number;
  minBodyBytesPerSec: number;
  idleTimeoutMs: number;
  socketTimeoutMs: number;
  maxWasmMemories: number;
  shutdownDrainMs: number;
  maxAnswerBytes: number;
  kernelThreads: number;
  persistenceJobs: number;
  /** With DATA_DIR: bytes of all files in it at most (0 in CONFIG_VARIABLES: derived at start, defaultDataDirMaxBytes). */
  dataDirMaxBytes: number;
  maxSessionLogBytes: number;
  lockStaleMs: number;
  kernelBuild: KernelBuild;
}

/** name in the environment, default (a function where it is read from the machine: by loadConfig, not at import), one-line description (README table). */
export const CONFIG_VARIABLES = [
  ['PORT', 'port', 3000, 'TCP port the server listens on'],
  ['HOST', 'host', '127.0.0.1', 'address the server binds to'],
  ['SESSION_TTL_MS', 'sessionTtlMs', 1_800_000, 'inactivity time after which a session expires'],
  ['MAX_VECTORS_PER_SESSION', 'maxVectorsPerSession', 50_000, 'capacity of one index (maxVectors)'],
  ['MAX_SESSIONS', 'maxSessions', 10_000, 'live sessions; POST /token answers 503 beyond it'],
  ['MAX_ADD_MANY_BATCH', 'maxAddManyBatch', 1000, 'vectors per POST /vectors/add-many'],
  ['MAX_GET_MANY_BATCH', 'maxGetManyBatch', 1000, 'ids per POST /vectors/get-many'],
  ['MAX_DELETE_MANY_BATCH', 'maxDeleteManyBatch', 1000, 'ids per POST /vectors/delete-many'],
  ['MAX_SEARCH_MANY_BATCH', 'maxSearchManyBatch', 64, 'query vectors per POST /search-many'],
  ['MAX_ID_LENGTH', 'maxIdLength', 256, 'characters in a vector id'],
  ['MAX_METADATA_BYTES', 'maxMetadataBytes', 8192, "UTF-8 bytes of one vector's metadata as JSON"],
  ['MAX_TEXT_BYTES', 'maxTextBytes', 32_768, "UTF-8 bytes of one vector's text (searched by keywords; at most 1 MiB)"],
  ['MAX_BODY_BYTES', 'maxBodyBytes', 32 * 1024 * 1024, 'bytes of one request body'],
  ['MAX_JSON_DEPTH', 'maxJsonDepth', 8, 'nesting depth of one metadata object or filter (the object itself is 1)'],
  ['MAX_METADATA_KEYS', 'maxMetadataKeys', 256, "keys of one vector's metadata, nested objects' keys included"],
  ['MAX_FILTER_KEYS', 'maxFilterKeys', 64, "keys of one search filter, nested objects' keys included"],
  [
    'MAX_FILTER_NODES',
    'maxFilterNodes',
    1024,
    'nodes of one filter: each field condition, each element of $in/$nin, each $and/$or/$not and each of their clauses',
  ],
  ['TOKEN_RATE_PER_MIN', 'tokenRatePerMin', 60, 'POST /token per client address per minute (burst of the same size); 0 turns it off'],
  ['REQUEST_RATE_PER_SEC', 'requestRatePerSec', 500, 'requests per token per second, with a burst of twice that; 0 turns it off'],
  [
    'MEMORY_BUDGET_BYTES',
    'memoryBudgetBytes',
    defaultMemoryBudget,
    "bytes callers can make the server hold: sessions' linear memories, their metadata stores (off the JS heap) and the JS heap of their ids, bodies and answers in flight (default a quarter of the machine's memory); 0 turns it off",
  ],
  ['DATA_DIR', 'dataDir', '', 'directory where sessions are persisted; empty keeps them in memory only'],
  [
    'FSYNC',
    'fsync',
    'never',
    'with DATA_DIR: `always` acknowledges a change only once fdatasync has it on disk (one per session per batch of changes in flight); `never` once the OS has it',
  ],
  [
    'CORS_ORIGINS',
    'corsOrigins',
    '*',
    'origins whose web pages may call the service: `*` (any: tokens are bearer headers, not cookies), or a comma-separated list such as `https://app.example,http://localhost:8080`',
  ],
  [
    'INSTANCE_ID',
    'instanceId',
    '',
    'name of this instance behind a proxy (`[a-z0-9]{1,16}`): tokens become `<id>.<secret>` and every response carries `x-tempvec-instance`; empty: plain tokens',
  ],
  [
    'TRUST_PROXY',
    'trustProxy',
    0,
    "1: take the client address from `X-Forwarded-For` (set it only behind a proxy that overwrites that header, as the cluster's nginx does); 0: the socket's address",
  ],
  [
    'MAX_IMPORT_BYTES',
    'maxImportBytes',
    512 * 1024 * 1024,
    'bytes of one POST /vectors/import body (NDJSON, read as it arrives; a full 50k x 1024 session exports to about 275 MiB as base64)',
  ],
  ['MAX_CONNECTIONS', 'maxConnections', 10_000, 'open TCP connections; past it new ones are closed at once (server.maxConnections)'],
  [
    'MAX_BODIES_IN_FLIGHT',
    'maxBodiesInFlight',
    256,
    'request bodies announcing more than 64 KiB (or chunked) being received at once; past it 503 `SERVER_AT_CAPACITY`',
  ],
  [
    'MAX_SMALL_BODIES_IN_FLIGHT',
    'maxSmallBodiesInFlight',
    1024,
    'request bodies announcing at most 64 KiB being received at once, a lane of their own (large bodies held open cannot lock them out); past it 503 `SERVER_AT_CAPACITY`',
  ],
  [
    'MAX_BODIES_IN_FLIGHT_PER_ADDRESS',
    'maxBodiesInFlightPerAddress',
    64,
    'request bodies announcing more than 64 KiB (or chunked) one client address (IPv6 by its /64) has in flight at once; past it 429 `RATE_LIMITED`; 0 turns it off',
  ],
  ['MAX_BODIES_IN_FLIGHT_PER_TOKEN', 'maxBodiesInFlightPerToken', 8, 'request bodies one token has in flight at once; past it 429 `RATE_LIMITED`'],
  [
    'MAX_BODY_BYTES_IN_FLIGHT',
    'maxBodyBytesInFlight',
    512 * 1024 * 1024,
    'bytes of the large request bodies being received, counted as they arrive (small ones are bounded by their count); past it 503 `SERVER_AT_CAPACITY`',
  ],
  [
    'MAX_IMPORTS_IN_FLIGHT',
    'maxImportsInFlight',
    4,
    'POST /vectors/import requests being read or written at once (one per token); past it 503 `SERVER_AT_CAPACITY` (429 `RATE_LIMITED` for a second one of a token)',
  ],
  [
    'MAX_SESSIONS_PER_ADDRESS',
    'maxSessionsPerAddress',
    100,
    'live sessions created from one client address (IPv6 by its /64; dormant ones on disk included); past it POST /token answers 429 `TOO_MANY_SESSIONS`; 0 turns it off',
  ],
  [
    'METRICS_TOKEN',
    'metricsToken',
    '',
    'when set, GET /metrics answers 401 unless sent `Authorization: Bearer <METRICS_TOKEN>`; empty leaves it open (keep it on an internal listener then)',
  ],
  [
    'METRICS_WINDOW_MS',
    'metricsWindowMs',
    60_000,
    "window of /metrics' event-loop delay gauges (max and p99 over the last this many ms, in 1 s slices; at least the scrape interval): a scrape resets nothing",
  ],
  ['HEADERS_TIMEOUT_MS', 'headersTimeoutMs', 10_000, "time to send a request's headers; past it 408 `REQUEST_TIMEOUT` and the connection is closed"],
  [
    'MIN_BODY_BYTES_PER_SEC',
    'minBodyBytesPerSec',
    16_384,
    'a body that has arrived slower than this after its first 10 s is cut with 408 `REQUEST_TIMEOUT`; idle keep-alive connections close after 5 s, silent ones after 60 s (all in /limits)',
  ],
  [
    'MAX_WASM_MEMORIES',
    'maxWasmMemories',
    12_000,
    'WebAssembly memories the process holds (V8 reserves about 10 GiB of address space for each and ran out at 13,090); a session needing one past it gets 503 `SERVER_AT_CAPACITY`',
  ],
  [
    'SHUTDOWN_DRAIN_MS',
    'shutdownDrainMs',
    10_000,
    'after SIGTERM: time answers in flight get to finish sending before the remaining connections are closed and the process exits 0',
  ],
  [
    'KERNEL_THREADS',
    'kernelThreads',
    defaultKernelThreads,
    'threads that run large searches beside the event loop (work queued per session, served in turn); 1 runs every search on the event loop',
  ],
  [
    'PERSISTENCE_JOBS',
    'persistenceJobs',
    2,
    `with DATA_DIR: session logs reopened, compacted or rewritten at once (each holds about ${PERSISTENCE_JOB_BUFFER_BYTES / MiB} MiB of buffers, counted in the memory budget; /limits \`persistence\`); the rest wait their turn`,
  ],
  [
    'DATA_DIR_MAX_BYTES',
    'dataDirMaxBytes',
    0,
    "with DATA_DIR: bytes of all session logs in it at most (/limits `persistence`); a change past it is refused with 507 DISK_QUOTA_EXCEEDED, compaction still runs to make room; 0 derives it at start: the bytes already in DATA_DIR plus 90% of its file system's free space",
  ],
  [
    'MAX_SESSION_LOG_BYTES',
    'maxSessionLogBytes',
    1024 * MiB,
    "with DATA_DIR: bytes of one session's log at most (a full session of 50,000 x 1024 float32 holds about 205 MB of vectors, and a log is compacted once it holds twice its live data); a change past it is refused with 507 SESSION_LOG_FULL",
  ],
  [
    'LOCK_STALE_MS',
    'lockStaleMs',
    10_000,
    "with DATA_DIR: the DATA_DIR lock's holder refreshes its heartbeat (the lock file's mtime) every third of this; a lock whose heartbeat is older is taken over by a new server (a new container on the same volume), one of a dead process on this host at once (/limits `persistence`); at least 2000",
  ],
  [
    'KERNEL_BUILD',
    'kernelBuild',
    'auto',
    'the kernel build that answers searches (/limits `backend`): `simd128` runs everywhere; `relaxed` fuses each multiply-add (relaxed SIMD: Node 22 or later, Node 20 only with `--experimental-wasm-relaxed-simd`; elsewhere the server refuses to start); `auto` is `simd128`, as the relaxed build measured slower on AMD Zen (docs/experiments/2026-11-26-relaxed-build-shipped.md)',
  ],
  [
    'MAX_ANSWER_BYTES',
    'maxAnswerBytes',
    32 * 1024 * 1024,
    'bytes of one answer of search, search-many, get-many or list (estimated before it is written; larger ones are streamed in pieces); past it 400 ANSWER_TOO_LARGE',
  ],
] as const satisfies readonly (readonly [string, keyof Config, number | string | (() => number), string])[];

/** README wording of defaults that depend on the machine (the README table must not). */
export const MACHINE_DEPENDENT_DEFAULTS: Partial<Record<(typeof CONFIG_VARIABLES)[number][0], string>> = {
  MEMORY_BUDGET_BYTES: "a quarter of the machine's memory",
  KERNEL_THREADS: "the machine's available parallelism",
  DATA_DIR_MAX_BYTES: "0: the bytes in DATA_DIR plus 90% of its file system's free space, at start",
};

/** Share of the free space at start that DATA_DIR_MAX_BYTES leaves to the logs by default (the rest: compactions' temporary files, other users). */
const DATA_DIR_FREE_SHARE = 0.9;

/**
 * DATA_DIR_MAX_BYTES by default: the bytes of the files already in `dir`
 * plus 90% of its file system's free space (that of its nearest existing
 * ancestor when it is not made yet); 0 (no quota) where that cannot be read.
 */
export function defaultDataDirMaxBytes(dir: string): number {
  const fs = nodeModule<typeof import('node:fs')>('node:fs');
  const path = nodeModule<typeof import('node:path')>('node:path');
  if (!fs || !path) return 0;
  let at = path.resolve(dir);
  while (!fs.existsSync(at) && path.dirname(at) !== at) at = path.dirname(at);
  try {
    const { bavail, bsize } = fs.statfsSync(at);
    let held = 0;
    if (at === path.resolve(dir)) for (const name of fs.readdirSync(at)) held += fs.statSync(path.join(at, name), { throwIfNoEntry: false })?.size ?? 0;
    return held + Math.floor(bavail * bsize * DATA_DIR_FREE_SHARE);
  } catch {
    return 0;
  }
}

/** A node: built-in, reached without importing it (this module also runs in browsers); undefined there. */
function nodeModule<T>(id: string): T | undefined {
  return (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.(id) as T | undefined;
}

/**
 * A quarter of the machine's memory: the rest is left to the V8 heap (ids,
 * metadata), the OS and other processes. This module also runs in browsers
 * (the SDK's local index), so node:os is reached without importing it.
 */
function defaultMemoryBudget(): number {
  const os = nodeOs();
  return os ? Math.floor(os.totalmem() / 4) : 1024 * 1024 * 1024;
}

/** node:os, reached without importing it (this module also runs in browsers); undefined there. */
function nodeOs() {
  return (globalThis as { process?: { getBuiltinModule?: (id: string) => unknown } }).process?.getBuiltinModule?.('node:os') as
    | { totalmem(): number; availableParallelism(): number }
    | undefined;
}

/** The machine's available parallelism (1 in a browser, where the SDK's local index reads this module). */
function defaultKernelThreads(): number {
  return nodeOs()?.availableParallelism() ?? 1;
}

export class ConfigError extends Error {}

/** Threads a process may start for searches (each holds an instance of the kernel per session it has served). */
export const MAX_KERNEL_THREADS = 256;

/** LOCK_STALE_MS's floor: a heartbeat every third of it must not come to more than one a second (proper-lockfile's floor too). */
const MIN_LOCK_STALE_MS = 2000;

/** How often the DATA_DIR lock's holder refreshes its heartbeat: three beats per stale interval, so one missed beat is not staleness. */
export const lockHeartbeatMs = (lockStaleMs: number) => Math.floor(lockStaleMs / 3);

/** What INSTANCE_ID may be: it appears in tokens, a response header and nginx's map. */
export const INSTANCE_ID_PATTERN = /^[a-z0-9]{1,16}$/;

function readNumber(env: Record<string, string | undefined>, name: string, fallback: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  const value = Number(raw);
  if (!Number.isSafeInteger(value) || value < 0) {
    throw new ConfigError(`${name} must be a non-negative integer, got "${raw}"`);
  }
  return value;
}

/** Read the configuration from `env`; `overrides` win (tests use them). */
export function loadConfig(env: Record<string, string | undefined> = process.env, overrides: Partial<Config> = {}): Config {
  const config: Record<string, unknown> = {};
  for (const [name, key, given] of CONFIG_VARIABLES) {
    const fallback = typeof given === 'function' ? given() : given;
    config[key] = typeof fallback === 'number' ? readNumber(env, name, fallback) : env[name] || fallback;
  }
  const base = config as unknown as Config;
  if (!(FSYNC_MODES as readonly string[]).includes(base.fsync)) {
    throw new ConfigError(`FSYNC must be one of ${FSYNC_MODES.join(', ')}, got "${base.fsync}"`);
  }
  const ttl = overrides.sessionTtlMs ?? base.sessionTtlMs;
  if (ttl < 1) throw new ConfigError('SESSION_TTL_MS must be at least 1');
  const final: Config = {
    ...base,
    sweepIntervalMs: Math.max(10, Math.min(60_000, Math.floor(ttl / 4))),
    // Published in /limits (admission), fixed here to keep the configuration table short.
    bodyGraceMs: 10_000,
    idleTimeoutMs: 5_000,
    socketTimeoutMs: 60_000,
    expiredTokenMemoryMs: Math.max(ttl, 24 * 3600_000),
    ...overrides,
  };
  corsOriginList(final.corsOrigins);
  if (!(final.kernelThreads >= 1 && final.kernelThreads <= MAX_KERNEL_THREADS)) {
    throw new ConfigError(`KERNEL_THREADS must be 1 to ${MAX_KERNEL_THREADS}, got ${final.kernelThreads}`);
  }
  if (final.metricsWindowMs < 1000) throw new ConfigError(`METRICS_WINDOW_MS must be at least 1000, got ${final.metricsWindowMs}`);
  if (final.persistenceJobs < 1) throw new ConfigError(`PERSISTENCE_JOBS must be at least 1, got ${final.persistenceJobs}`);
  if (final.dataDir !== '' && final.dataDirMaxBytes === 0) final.dataDirMaxBytes = defaultDataDirMaxBytes(final.dataDir);
  if (final.lockStaleMs < MIN_LOCK_STALE_MS) throw new ConfigError(`LOCK_STALE_MS must be at least ${MIN_LOCK_STALE_MS}, got ${final.lockStaleMs}`);
  checkKernelBuild(final.kernelBuild);
  if (final.maxTextBytes > SPEC_LIMITS.maxTextBytesCap) {
    throw new ConfigError(`MAX_TEXT_BYTES must be at most ${SPEC_LIMITS.maxTextBytesCap}, got ${final.maxTextBytes}`);
  }
  if (final.instanceId !== '' && !INSTANCE_ID_PATTERN.test(final.instanceId)) {
    throw new ConfigError(`INSTANCE_ID must be 1 to 16 lowercase letters or digits, got "${final.instanceId}"`);
  }
  return Object.freeze(final);
}

/**
 * The build KERNEL_BUILD runs. `auto` is simd128 on every engine: on the CPU
 * measured (AMD EPYC, Zen) the fused multiply-add made search-many slower
 * (1.03 to 1.18x) and one query no faster (0.93 to 1.07x; docs/experiments/2026-11-26-relaxed-build-shipped.md).
 * The choice depends on no timing, so scores never change between restarts.
 */
export function backendFor(kernelBuild: KernelBuild): Backend {
  return kernelBuild === 'relaxed' ? 'wasm-relaxed-simd' : 'wasm-simd128';
}

/** A KERNEL_BUILD this engine can run, or ConfigError. */
function checkKernelBuild(kernelBuild: string): void {
  if (!(KERNEL_BUILDS as readonly string[]).includes(kernelBuild)) {
    throw new ConfigError(`KERNEL_BUILD must be one of ${KERNEL_BUILDS.join(', ')}, got "${kernelBuild}"`);
  }
  if (kernelBuild === 'relaxed' && !relaxedSimdSupported()) {
    const engine = (globalThis as { process?: { version?: string } }).process?.version;
    throw new ConfigError(
      `KERNEL_BUILD=relaxed: this engine${engine ? ` (Node ${engine})` : ''} does not run WebAssembly relaxed SIMD; use Node 22 or later (Node 20: node --experimental-wasm-relaxed-simd), or KERNEL_BUILD=auto`,
    );
  }
}

/**
 * CORS_ORIGINS as a list: ['*'], or origins written as browsers send them
 * (scheme://host[:port], no path); throws ConfigError on anything else.
 */
export function corsOriginList(value: string): string[] {
  const list = value
    .split(',')
    .map((s) => s.trim())
    .filter((s) => s !== '');
  if (list.length === 0) throw new ConfigError('CORS_ORIGINS must be * or a comma-separated list of origins');
  if (list.includes('*')) {
    if (list.length > 1) throw new ConfigError('CORS_ORIGINS is either * or a list of origins, not both');
    return list;
  }
  for (const origin of list) {
    let parsed: URL | undefined;
    try {
      parsed = new URL(origin);
    } catch {
      /* reported below */
    }
    if (!parsed || parsed.origin !== origin) {
      throw new ConfigError(`CORS_ORIGINS: "${origin}" is not an origin (scheme://host[:port], lowercase, no path or trailing slash)`);
    }
  }
  return list;
}

/** What GET /limits publishes (and the OpenAPI document's bounds). */
export function publicLimits(config: Config) {
  return {
    maxDimensions: SPEC_LIMITS.maxDimensions,
    maxVectorsPerSession: config.maxVectorsPerSession,
    maxSessions: config.maxSessions,
    sessionTtlMs: config.sessionTtlMs,
    topK: { min: SPEC_LIMITS.minTopK, max: SPEC_LIMITS.maxTopK, default: SPEC_LIMITS.defaultTopK },
    candidatePool: {
      min: SPEC_LIMITS.minCandidatePool,
      max: SPEC_LIMITS.maxCandidatePool,
      default: SPEC_LIMITS.defaultCandidatePool,
    },
    batch: {
      addMany: config.maxAddManyBatch,
      getMany: config.maxGetManyBatch,
      deleteMany: config.maxDeleteManyBatch,
      searchMany: config.maxSearchManyBatch,
    },
    maxIdLength: config.maxIdLength,
    maxMetadataBytes: config.maxMetadataBytes,
    maxTextBytes: config.maxTextBytes,
    text: {
      analyzers: [...ANALYZERS],
      defaultAnalyzer: SPEC_LIMITS.defaultAnalyzer,
      maxQueryTextBytes: SPEC_LIMITS.maxQueryTextBytes,
      maxQueryTextBytesPerRequest: SPEC_LIMITS.maxQueryTextBytesPerRequest,
      bm25: { k1: SPEC_LIMITS.bm25K1, b: SPEC_LIMITS.bm25B },
      fusion: {
        defaultMethod: 'rrf' as const,
        rrfK: { min: 1, max: SPEC_LIMITS.maxRrfK, default: SPEC_LIMITS.defaultRrfK },
        defaultAlpha: SPEC_LIMITS.defaultLinearAlpha,
      },
    },
    maxBodyBytes: config.maxBodyBytes,
    maxImportBytes: config.maxImportBytes,
    maxAnswerBytes: config.maxAnswerBytes,
    list: { min: SPEC_LIMITS.minListLimit, max: SPEC_LIMITS.maxListLimit, default: SPEC_LIMITS.defaultListLimit },
    maxJsonDepth: config.maxJsonDepth,
    maxMetadataKeys: config.maxMetadataKeys,
    maxFilterKeys: config.maxFilterKeys,
    maxFilterNodes: config.maxFilterNodes,
    maxIndexedValueBytes: SPEC_LIMITS.maxIndexedValueBytes,
    /** 0 means the limit is off. */
    rateLimits: {
      tokensPerMinutePerAddress: config.tokenRatePerMin,
      requestsPerSecondPerToken: config.requestRatePerSec,
      requestBurstPerToken: config.requestRatePerSec * 2,
    },
    memoryBudgetBytes: config.memoryBudgetBytes,
    memoryStoredMaxBytes: memoryStoredMaxBytes(config.memoryBudgetBytes),
    persistent: config.dataDir !== '',
    persistence: {
      jobs: config.persistenceJobs,
      bufferBytesPerJob: PERSISTENCE_JOB_BUFFER_BYTES,
      dataDirMaxBytes: config.dataDirMaxBytes,
      maxSessionLogBytes: config.maxSessionLogBytes,
      lockStaleMs: config.lockStaleMs,
      lockHeartbeatMs: lockHeartbeatMs(config.lockStaleMs),
    },
    maxAbsComponent: SPEC_LIMITS.maxAbsComponent,
    metrics: [...METRICS],
    vectorTypes: [...VECTOR_TYPES],
    defaultMetric: SPEC_LIMITS.defaultMetric,
    backend: backendFor(config.kernelBuild),
    corsOrigins: corsOriginList(config.corsOrigins),
    admission: {
      maxConnections: config.maxConnections,
      maxBodiesInFlight: config.maxBodiesInFlight,
      maxBodiesInFlightPerToken: config.maxBodiesInFlightPerToken,
      maxBodyBytesInFlight: config.maxBodyBytesInFlight,
      maxSmallBodiesInFlight: config.maxSmallBodiesInFlight,
      smallBodyBytes: SPEC_LIMITS.smallBodyBytes,
      /** 0 means off. */
      maxBodiesInFlightPerAddress: config.maxBodiesInFlightPerAddress,
      maxImportsInFlight: config.maxImportsInFlight,
      maxImportsInFlightPerToken: SPEC_LIMITS.maxImportsInFlightPerToken,
      /** 0 means off. */
      maxSessionsPerAddress: config.maxSessionsPerAddress,
      headersTimeoutMs: config.headersTimeoutMs,
      bodyGraceMs: config.bodyGraceMs,
      minBodyBytesPerSec: config.minBodyBytesPerSec,
      idleTimeoutMs: config.idleTimeoutMs,
      socketTimeoutMs: config.socketTimeoutMs,
      maxWasmMemories: config.maxWasmMemories,
      shutdownDrainMs: config.shutdownDrainMs,
    },
    kernelThreads: config.kernelThreads,
  };
}
export type PublicLimits = ReturnType<typeof publicLimits>;

/** The request limits among a server's public ones, back as Config fields (the SDK's local index applies a server's caps with them). */
export function requestLimitsOf(
  limits: Pick<PublicLimits, 'maxVectorsPerSession' | 'batch' | 'maxIdLength' | 'maxMetadataBytes' | 'maxJsonDepth' | 'maxMetadataKeys' | 'maxFilterKeys'> &
    Partial<Pick<PublicLimits, 'maxTextBytes' | 'maxFilterNodes'>>,
) {
  return {
    maxVectorsPerSession: limits.maxVectorsPerSession,
    maxAddManyBatch: limits.batch.addMany,
    maxGetManyBatch: limits.batch.getMany,
    maxDeleteManyBatch: limits.batch.deleteMany,
    maxSearchManyBatch: limits.batch.searchMany,
    maxIdLength: limits.maxIdLength,
    maxMetadataBytes: limits.maxMetadataBytes,
    maxJsonDepth: limits.maxJsonDepth,
    maxMetadataKeys: limits.maxMetadataKeys,
    maxFilterKeys: limits.maxFilterKeys,
    // A server from before keyword search has no text limit: this SDK's default then.
    ...(limits.maxTextBytes === undefined ? {} : { maxTextBytes: limits.maxTextBytes }),
    // A server from before the node limit has none: this SDK's default then.
    ...(limits.maxFilterNodes === undefined ? {} : { maxFilterNodes: limits.maxFilterNodes }),
  } satisfies Partial<Config>;
}
