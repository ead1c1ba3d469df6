// The configuration read from the environment once, and checked: loadConfig
// throws ConfigError on anything it cannot run with.
import { relaxedSimdSupported } from '../kernel/relaxed-simd.js';
import { defaultDataDirMaxBytes } from './machine-defaults.js';
import { type Backend, BUILTIN_EMBEDDING_MODEL, FSYNC_MODES, KERNEL_BUILDS, type KernelBuild, SPEC_LIMITS } from './spec-limits.js';
import { type Config, CONFIG_VARIABLES } from './variables.js';

export class ConfigError extends Error {}

/** Threads a process may start for searches (each holds an instance of the kernel per session it has served). */
export const MAX_KERNEL_THREADS = 256;

/** All tokens together may have this many times one token's texts being embedded (EMBEDDING_TEXTS_IN_FLIGHT_PER_TOKEN). */
const EMBEDDING_IN_FLIGHT_TOKENS = 8;

/** LOCK_STALE_MS's floor: a heartbeat every third of it must not come to more than one a second (proper-lockfile's floor too). */
const MIN_LOCK_STALE_MS = 2000;

/** EMBEDDING_MODEL's UTF-8 length at most (it is stored with every upsert of a session it fixes, its length in one byte). */
const MAX_MODEL_NAME = 128;

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
    embeddingTextsInFlight: EMBEDDING_IN_FLIGHT_TOKENS * base.embeddingTextsInFlightPerToken,
    ...overrides,
  };
  corsOriginList(final.corsOrigins);
  if (!(final.kernelThreads >= 1 && final.kernelThreads <= MAX_KERNEL_THREADS)) {
    throw new ConfigError(`KERNEL_THREADS must be 1 to ${MAX_KERNEL_THREADS}, got ${final.kernelThreads}`);
  }
  if (!(final.embeddingThreads >= 1 && final.embeddingThreads <= MAX_KERNEL_THREADS)) {
    throw new ConfigError(`EMBEDDING_THREADS must be 1 to ${MAX_KERNEL_THREADS}, got ${final.embeddingThreads}`);
  }
  checkEmbeddingEndpoint(final);
  if (final.embeddingPreload > 1) throw new ConfigError(`EMBEDDING_PRELOAD must be 0 or 1, got ${final.embeddingPreload}`);
  checkEmbeddingLimits(final);
  if (final.metricsWindowMs < 1000) throw new ConfigError(`METRICS_WINDOW_MS must be at least 1000, got ${final.metricsWindowMs}`);
  if (final.persistenceJobs < 1) throw new ConfigError(`PERSISTENCE_JOBS must be at least 1, got ${final.persistenceJobs}`);
  if (final.dataDir !== '' && final.dataDirMaxBytes === 0) final.dataDirMaxBytes = defaultDataDirMaxBytes(final.dataDir);
  if (final.lockStaleMs < MIN_LOCK_STALE_MS) throw new ConfigError(`LOCK_STALE_MS must be at least ${MIN_LOCK_STALE_MS}, got ${final.lockStaleMs}`);
  checkKernelBuild(final.kernelBuild);
  if (final.maxTextBytes > SPEC_LIMITS.maxTextBytesCap) {
    throw new ConfigError(`MAX_TEXT_BYTES must be at most ${SPEC_LIMITS.maxTextBytesCap}, got ${final.maxTextBytes}`);
  }
  if (final.maxRecordTtlMs < 1) throw new ConfigError(`MAX_RECORD_TTL_MS must be at least 1, got ${final.maxRecordTtlMs}`);
  if (final.instanceId !== '' && !INSTANCE_ID_PATTERN.test(final.instanceId)) {
    throw new ConfigError(`INSTANCE_ID must be 1 to 16 lowercase letters or digits, got "${final.instanceId}"`);
  }
  return Object.freeze(final);
}

/** The embedding limits hold together: one token may have a whole add-many or /embed call in flight (its cap is raised to that), and all tokens at least that. */
function checkEmbeddingLimits(config: Config): void {
  config.embeddingTextsInFlightPerToken = Math.max(config.embeddingTextsInFlightPerToken, config.maxAddManyBatch, config.maxEmbedTexts);
  config.embeddingTextsInFlight = Math.max(config.embeddingTextsInFlight, config.embeddingTextsInFlightPerToken);
  if (config.maxEmbedTexts < 1 || config.maxEmbedTextBytes < 1 || config.maxEmbedBytes < config.maxEmbedTextBytes) {
    throw new ConfigError('MAX_EMBED_TEXTS and MAX_EMBED_TEXT_BYTES must be at least 1, and MAX_EMBED_BYTES at least MAX_EMBED_TEXT_BYTES');
  }
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
/** With EMBEDDING_URL: an http(s) URL, a model name other than the builtin's, its dimension, and bounded retries. */
function checkEmbeddingEndpoint(config: Config): void {
  if (config.embeddingUrl === '') return;
  let url: URL | undefined;
  try {
    url = new URL(config.embeddingUrl);
  } catch {
    // Answered below.
  }
  if (!url || (url.protocol !== 'http:' && url.protocol !== 'https:')) throw new ConfigError('EMBEDDING_URL must be an http:// or https:// URL');
  if (url.username || url.password) throw new ConfigError('EMBEDDING_URL must not carry credentials; set EMBEDDING_API_KEY');
  if (config.embeddingModel === '' || config.embeddingModel === BUILTIN_EMBEDDING_MODEL || Buffer.byteLength(config.embeddingModel) > MAX_MODEL_NAME) {
    throw new ConfigError(
      `EMBEDDING_MODEL must name the endpoint's model (1 to ${MAX_MODEL_NAME} bytes of UTF-8, not ${BUILTIN_EMBEDDING_MODEL}) with EMBEDDING_URL`,
    );
  }
  if (!(config.embeddingDimensions >= 1 && config.embeddingDimensions <= SPEC_LIMITS.maxDimensions)) {
    throw new ConfigError(`EMBEDDING_DIMENSIONS must be 1 to ${SPEC_LIMITS.maxDimensions} with EMBEDDING_URL, got ${config.embeddingDimensions}`);
  }
  if (!(config.embeddingAttempts >= 1 && config.embeddingAttempts <= 10))
    throw new ConfigError(`EMBEDDING_ATTEMPTS must be 1 to 10, got ${config.embeddingAttempts}`);
  if (config.embeddingTimeoutMs < 1 || config.embeddingBatchTexts < 1)
    throw new ConfigError('EMBEDDING_TIMEOUT_MS and EMBEDDING_BATCH_TEXTS must be at least 1');
}

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
