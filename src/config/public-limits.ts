// The limits a server publishes (GET /limits, the OpenAPI document's
// bounds), and the request limits among them back as Config fields.
import { backendFor, corsOriginList, lockHeartbeatMs } from './load.js';
import {
  ANALYZERS,
  BUILTIN_EMBEDDING_MODEL,
  EMBEDDING_MODELS,
  type EmbeddingModelSpec,
  memoryStoredMaxBytes,
  METRICS,
  PERSISTENCE_JOB_BUFFER_BYTES,
  SPEC_LIMITS,
  VECTOR_TYPES,
} from './spec-limits.js';
import type { Config } from './variables.js';

/** The cap on one POST /mcp body: the spec's, or MAX_BODY_BYTES when lower. */
export const mcpBodyBytes = (config: Config) => Math.min(SPEC_LIMITS.maxMcpBodyBytes, config.maxBodyBytes);

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
    stages: {
      mmrCandidates: { min: 1, max: SPEC_LIMITS.maxMmrCandidates, default: SPEC_LIMITS.defaultMmrCandidates },
      groupSize: { min: SPEC_LIMITS.minGroupSize, max: SPEC_LIMITS.maxGroupSize, default: SPEC_LIMITS.defaultGroupSize },
      decay: { defaultMidpoint: SPEC_LIMITS.defaultDecayMidpoint, defaultWeight: SPEC_LIMITS.defaultDecayWeight },
      maxPathBytes: SPEC_LIMITS.maxMetadataPathBytes,
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
    recordTtl: { maxTtlMs: config.maxRecordTtlMs, sweepIntervalMs: SPEC_LIMITS.recordSweepIntervalMs },
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
    mcp: { maxBodyBytes: mcpBodyBytes(config), maxAnswerBytes: config.maxMcpAnswerBytes },
    list: { min: SPEC_LIMITS.minListLimit, max: SPEC_LIMITS.maxListLimit, default: SPEC_LIMITS.defaultListLimit },
    facet: {
      limit: { min: SPEC_LIMITS.minFacetLimit, max: SPEC_LIMITS.maxFacetLimit, default: SPEC_LIMITS.defaultFacetLimit },
      maxRanges: SPEC_LIMITS.maxFacetRanges,
    },
    maxFieldPathLength: SPEC_LIMITS.maxFieldPathLength,
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
    embedding: {
      models: [servedEmbeddingModel(config)],
      maxTexts: config.maxEmbedTexts,
      maxTextBytes: config.maxEmbedTextBytes,
      maxBytes: config.maxEmbedBytes,
      textsInFlight: config.embeddingTextsInFlight,
      textsInFlightPerToken: config.embeddingTextsInFlightPerToken,
      threads: config.embeddingThreads,
      ...(config.embeddingUrl
        ? { endpoint: { timeoutMs: config.embeddingTimeoutMs, attempts: config.embeddingAttempts, batchTexts: config.embeddingBatchTexts } }
        : {}),
    },
  };
}
export type PublicLimits = ReturnType<typeof publicLimits>;

/** The request limits among a server's public ones, back as Config fields (the SDK's local index applies a server's caps with them). */
export function requestLimitsOf(
  limits: Pick<PublicLimits, 'maxVectorsPerSession' | 'batch' | 'maxIdLength' | 'maxMetadataBytes' | 'maxJsonDepth' | 'maxMetadataKeys' | 'maxFilterKeys'> &
    Partial<Pick<PublicLimits, 'maxTextBytes' | 'maxFilterNodes'>> & { recordTtl?: { maxTtlMs: number } },
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
    ...(limits.recordTtl === undefined ? {} : { maxRecordTtlMs: limits.recordTtl.maxTtlMs }),
    // A server from before the node limit has none: this SDK's default then.
    ...(limits.maxFilterNodes === undefined ? {} : { maxFilterNodes: limits.maxFilterNodes }),
  } satisfies Partial<Config>;
}

/** The model the server embeds with: its endpoint's (EMBEDDING_URL), else the builtin one. */
export function servedEmbeddingModel(config: Config): EmbeddingModelSpec {
  if (!config.embeddingUrl) return EMBEDDING_MODELS[BUILTIN_EMBEDDING_MODEL];
  return { name: config.embeddingModel, dimensions: config.embeddingDimensions, metric: 'cosine' };
}
