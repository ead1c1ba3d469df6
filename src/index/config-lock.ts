// The config lock: the first add fixes an index's dimension, metric and
// vector type (and the first text or named analyzer its analyzer); a later
// add may repeat them, not change them. Pure functions of the locked config
// and an add's options: the config the add writes, or the error it gets.
import { SPEC_LIMITS, type AnalyzerName, type Metric, type VectorType } from '../config.js';
import { apiError } from '../errors.js';
import type { IndexConfig, UpsertOptions } from './types.js';

/** The vector half of the config an add writes, and where its dimension comes from (for error messages). */
export interface VectorConfig {
  dimensions: number;
  metric: Metric;
  vectorType: VectorType;
  dimensionSource: string;
}

/** The dimension, metric and vector type an add with `options` writes; `firstLength`: its first vector's length (none without vectors). */
export function lockVectorConfig(locked: Readonly<IndexConfig>, options: UpsertOptions, firstLength: number | undefined): VectorConfig {
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

function lockedError(code: 'METRIC_LOCKED' | 'VECTOR_TYPE_LOCKED' | 'ANALYZER_LOCKED', field: string, expected: string, actual: string) {
  return apiError(code, `the session ${field} is ${expected}; reset the index to change it`, { path: `/${field}`, expected, actual });
}
