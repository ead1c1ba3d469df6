// The config lock as a pure function: on random locked configs and add
// options, lockVectorConfig and lockAnalyzer give what the rules say (a plain
// restatement here): the locked value when one is set and the add repeats or
// omits it, the add's own or the default before, the *_LOCKED error otherwise.
import { expect } from 'chai';
import { SPEC_LIMITS, type AnalyzerName, type Metric, type VectorType } from '../../src/config.js';
import { analyzerFor, lockAnalyzer, lockEmbedding, lockVectorConfig } from '../../src/index/config-lock.js';
import type { IndexConfig, UpsertOptions } from '../../src/index/types.js';
import { randomInt, seededRng, type Rng } from '../helpers/random.js';
import { expectApiError } from '../helpers/errors.js';

const pick = <T>(rng: Rng, items: readonly T[]): T => items[randomInt(rng, items.length)];
const METRICS: Metric[] = ['cosine', 'l2'];
const TYPES: VectorType[] = ['float32', 'int8'];
const ANALYZERS: AnalyzerName[] = ['standard', 'english'];

function randomLocked(rng: Rng): IndexConfig {
  const dimensions = rng() < 0.4 ? null : 1 + randomInt(rng, 4);
  return {
    dimensions,
    metric: dimensions === null ? null : pick(rng, METRICS),
    vectorType: dimensions === null ? SPEC_LIMITS.defaultVectorType : pick(rng, TYPES),
    analyzer: rng() < 0.5 ? null : pick(rng, ANALYZERS),
    embedding: null,
  };
}

function randomOptions(rng: Rng): UpsertOptions {
  const options: UpsertOptions = {};
  if (rng() < 0.5) options.dimensions = 1 + randomInt(rng, 4);
  if (rng() < 0.5) options.metric = pick(rng, METRICS);
  if (rng() < 0.5) options.vectorType = pick(rng, TYPES);
  if (rng() < 0.5) options.analyzer = pick(rng, ANALYZERS);
  return options;
}

/** The first rule an add breaks, in the order the lock checks them; null when it breaks none. */
function brokenRule(locked: IndexConfig, options: UpsertOptions, firstLength: number | undefined): string | null {
  if (locked.metric !== null && options.metric !== undefined && options.metric !== locked.metric) return 'METRIC_LOCKED';
  if (locked.dimensions !== null && options.vectorType !== undefined && options.vectorType !== locked.vectorType) return 'VECTOR_TYPE_LOCKED';
  if (locked.dimensions !== null && options.dimensions !== undefined && options.dimensions !== locked.dimensions) return 'DIMENSION_MISMATCH';
  if (locked.dimensions === null && options.dimensions === undefined && firstLength === undefined) return 'VALIDATION_ERROR';
  return null;
}

describe('config lock', () => {
  it('keeps a locked dimension, metric and vector type, and takes the add’s own or the default before', () => {
    const rng = seededRng(41);
    let refused = 0;
    for (let i = 0; i < 2000; i++) {
      const locked = randomLocked(rng);
      const options = randomOptions(rng);
      const firstLength = rng() < 0.1 ? undefined : 1 + randomInt(rng, 4);
      const broken = brokenRule(locked, options, firstLength);
      if (broken) {
        expectApiError(() => lockVectorConfig(locked, options, firstLength), broken);
        refused++;
        continue;
      }
      const fixed = lockVectorConfig(locked, options, firstLength);
      expect(fixed.dimensions).to.equal(locked.dimensions ?? options.dimensions ?? firstLength);
      expect(fixed.metric).to.equal(locked.metric ?? options.metric ?? SPEC_LIMITS.defaultMetric);
      expect(fixed.vectorType).to.equal(locked.dimensions === null ? (options.vectorType ?? SPEC_LIMITS.defaultVectorType) : locked.vectorType);
    }
    expect(refused).to.be.within(200, 1800);
  });

  it('keeps a locked analyzer; names the add’s own before, and the default for texts without either', () => {
    const rng = seededRng(42);
    for (let i = 0; i < 500; i++) {
      const locked = randomLocked(rng);
      const options = randomOptions(rng);
      if (locked.analyzer !== null && options.analyzer !== undefined && options.analyzer !== locked.analyzer) {
        expectApiError(() => lockAnalyzer(locked, options), 'ANALYZER_LOCKED');
        continue;
      }
      expect(lockAnalyzer(locked, options)).to.equal(locked.analyzer ?? options.analyzer ?? null);
      expect(analyzerFor(locked, options)).to.equal(locked.analyzer ?? options.analyzer ?? SPEC_LIMITS.defaultAnalyzer);
    }
  });

  it('fixes the embedding model with its dimension and metric; a session of given vectors takes none', () => {
    const MODEL = 'use-lite-512' as const;
    const fresh: IndexConfig = { dimensions: null, metric: null, vectorType: 'float32', analyzer: null, embedding: null };
    const modelled: IndexConfig = { ...fresh, dimensions: 512, metric: 'cosine', embedding: MODEL };
    const given: IndexConfig = { ...fresh, dimensions: 512, metric: 'cosine' };
    // Fresh: named or embedded, the model and its 512 / cosine; neither: no model.
    for (const options of [{ embedding: MODEL }, { embeddedWith: MODEL }] satisfies UpsertOptions[]) {
      expect(lockEmbedding(fresh, options)).to.equal(MODEL);
      expect(lockVectorConfig(fresh, options, 512)).to.include({ dimensions: 512, metric: 'cosine' });
    }
    expect(lockEmbedding(fresh, {})).to.equal(null);
    expectApiError(() => lockVectorConfig(fresh, { embeddedWith: MODEL, metric: 'l2' }, 512), 'METRIC_LOCKED');
    expectApiError(() => lockVectorConfig(fresh, { embedding: MODEL, dimensions: 384 }, 384), 'DIMENSION_MISMATCH');
    // Locked: repeated or omitted, the model; vectors alone keep it.
    expect(lockEmbedding(modelled, { embedding: MODEL, embeddedWith: MODEL })).to.equal(MODEL);
    expect(lockEmbedding(modelled, {})).to.equal(MODEL);
    // Given vectors: a named model is EMBEDDING_LOCKED, texts to embed NO_EMBEDDING_MODEL, vectors alone fine.
    expectApiError(() => lockEmbedding(given, { embedding: MODEL }), 'EMBEDDING_LOCKED');
    expectApiError(() => lockEmbedding(given, { embeddedWith: MODEL }), 'NO_EMBEDDING_MODEL');
    expect(lockEmbedding(given, {})).to.equal(null);
  });
});
