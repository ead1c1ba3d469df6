// The config lock: the first add fixes an index's dimension, metric and
// vector type (and the first text or named analyzer its analyzer); a later
// add may repeat them, not change them. Pure functions of the locked config
// and an add's options: the config the add writes, or the error it gets.
import { EMBEDDING_MODELS, SPEC_LIMITS, type AnalyzerName, type EmbeddingModel, type Metric, type VectorType } from '../config.js';
import { apiError } from '../errors.js';
import type { IndexConfig, UpsertOptions } from './types.js';

/** The vector half of the config an add writes, and where its dimension comes from (for error messages). */
export interface VectorConfig {
  dimensions: number;
  metric: Metric;
  vectorType: VectorType;
  dimensionSource: string;
}

/**
 * The embedding model an add with `options` leaves the session with: the
 * locked one, else the one it names or embedded its texts with. A session
 * whose vectors came without a model takes none: 409 EMBEDDING_LOCKED for a
 * named one, 400 NO_EMBEDDING_MODEL for texts embedded to be stored there.
 */
export function lockEmbedding(locked: Readonly<IndexConfig>, options: UpsertOptions): EmbeddingModel | null {
  const named = options.embedding;
  if (named !== undefined && locked.dimensions !== null && named !== locked.embedding) {
    throw lockedError('EMBEDDING_LOCKED', 'embedding', locked.embedding ?? 'none (its vectors were given)', named);
  }
  const used = options.embeddedWith;
  if (used !== undefined && locked.dimensions !== null && used !== locked.embedding) throw noEmbeddingModel(locked, 'store a record by its text alone');
  if (named !== undefined && used !== undefined && named !== used) throw lockedError('EMBEDDING_LOCKED', 'embedding', used, named);
  return locked.dimensions !== null ? locked.embedding : (named ?? used ?? null);
}

/**
 * 400 NO_EMBEDDING_MODEL: the session has no model to embed its texts with:
 * none yet, its vectors were given, or its model is not the one this server
 * embeds with (a server restarted with another EMBEDDING_URL, an import).
 */
export function noEmbeddingModel(locked: Readonly<IndexConfig>, what: string) {
  return apiError('NO_EMBEDDING_MODEL', noModelMessage(locked, what), { dimensions: locked.dimensions, embedding: locked.embedding });
}

function noModelMessage(locked: Readonly<IndexConfig>, what: string): string {
  if (locked.dimensions === null) {
    return `this session has no embedding model yet, so it cannot ${what}: add a record with text and no vector, or name one with "embedding": "${Object.keys(EMBEDDING_MODELS)[0]}" in an add`;
  }
  if (locked.embedding !== null) {
    return `this session's texts are embedded by ${locked.embedding}, which this server does not embed with, so it cannot ${what}; send vectors, or reset the index (POST /index/reset) and add records by their text`;
  }
  return `this session's vectors (dimension ${locked.dimensions}) were given without an embedding model, so it cannot ${what}; send vectors, or reset the index (POST /index/reset) and add records by their text`;
}

/** The dimension, metric and vector type an add with `options` writes; `firstLength`: its first vector's length (none without vectors). */
export function lockVectorConfig(locked: Readonly<IndexConfig>, options: UpsertOptions, firstLength: number | undefined): VectorConfig {
  const model = lockEmbedding(locked, options);
  if (model !== null && locked.dimensions === null) return modelConfig(model, options);
  if (options.metric !== undefined && locked.metric !== null && options.metric !== locked.metric) {
    throw lockedError('METRIC_LOCKED', 'metric', locked.metric, options.metric);
  }
  if (options.vectorType !== undefined && locked.dimensions !== null && options.vectorType !== locked.vectorType) {
    throw lockedError('VECTOR_TYPE_LOCKED', 'vectorType', locked.vectorType, options.vectorType);
  }
  if (options.dimensions !== undefined && locked.dimensions !== null && options.dimensions !== locked.dimensions) {
    throw apiError('DIMENSION_MISMATCH', `the session dimension is ${locked.dimensions}; reset the index to change it`, {
      path: '/dimensions',
      expected: locked.dimensions,
      actual: options.dimensions,
    });
  }
  const dimensions = locked.dimensions ?? options.dimensions ?? firstLength;
  if (dimensions === undefined) throw apiError('VALIDATION_ERROR', 'at least one vector is required', { path: '/vectors' });
  return {
    dimensions,
    metric: locked.metric ?? options.metric ?? SPEC_LIMITS.defaultMetric,
    vectorType: locked.dimensions !== null ? locked.vectorType : (options.vectorType ?? SPEC_LIMITS.defaultVectorType),
    dimensionSource: locked.dimensions !== null ? 'the session dimension' : options.dimensions !== undefined ? 'dimensions' : "the first vector's length",
  };
}

/**
 * The analyzer an add with `options` fixes before its texts: the locked one,
 * else the one it names (fixed even by an add without text, so a log's replay
 * restores it), else null (the first text then fixes the default: analyzerFor).
 */
export function lockAnalyzer(locked: Readonly<IndexConfig>, options: UpsertOptions): AnalyzerName | null {
  if (options.analyzer !== undefined && locked.analyzer !== null && options.analyzer !== locked.analyzer) {
    throw lockedError('ANALYZER_LOCKED', 'analyzer', locked.analyzer, options.analyzer);
  }
  return locked.analyzer ?? options.analyzer ?? null;
}

/** The analyzer an add with `options` analyses its texts with (a search: with no options). */
export function analyzerFor(locked: Readonly<IndexConfig>, options: UpsertOptions = {}): AnalyzerName {
  return locked.analyzer ?? options.analyzer ?? SPEC_LIMITS.defaultAnalyzer;
}

/** A first add that fixes a model: its dimension and metric, the options' own checked against them. */
function modelConfig(model: EmbeddingModel, options: UpsertOptions): VectorConfig {
  const { dimensions, metric } = EMBEDDING_MODELS[model];
  if (options.metric !== undefined && options.metric !== metric) throw lockedError('METRIC_LOCKED', 'metric', metric, options.metric);
  if (options.dimensions !== undefined && options.dimensions !== dimensions) {
    throw apiError('DIMENSION_MISMATCH', `the embedding model ${model} has ${dimensions} dimensions`, {
      path: '/dimensions',
      expected: dimensions,
      actual: options.dimensions,
    });
  }
  return { dimensions, metric, vectorType: options.vectorType ?? SPEC_LIMITS.defaultVectorType, dimensionSource: `the embedding model ${model}'s dimension` };
}

function lockedError(code: 'METRIC_LOCKED' | 'VECTOR_TYPE_LOCKED' | 'ANALYZER_LOCKED' | 'EMBEDDING_LOCKED', field: string, expected: string, actual: string) {
  return apiError(code, `the session ${field} is ${expected}; reset the index to change it`, { path: `/${field}`, expected, actual });
}
