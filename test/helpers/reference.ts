// A plain TypeScript exact search to check the WASM kernel against: float64
// arithmetic over the float32 values the kernel stores, the same score
// definitions (cosine similarity, higher is nearer; Euclidean distance, lower
// is nearer), ties broken by insertion order.
import { expect } from 'chai';
import type { Metric } from '../../src/config.js';

export interface ReferenceRow {
  id: string;
  vector: ArrayLike<number>;
  /** Insertion order (lower was written earlier): the tie-break. */
  seq: number;
}

export interface ScoredId {
  id: string;
  score: number;
}

const f32 = (values: ArrayLike<number>) => Array.from(Float32Array.from(values as ArrayLike<number>));

export function referenceScore(metric: Metric, query: ArrayLike<number>, vector: ArrayLike<number>): number {
  const q = f32(query);
  const v = f32(vector);
  if (metric === 'cosine') {
    let dot = 0,
      qq = 0,
      vv = 0;
    for (let i = 0; i < q.length; i++) {
      dot += q[i] * v[i];
      qq += q[i] * q[i];
      vv += v[i] * v[i];
    }
    return dot / Math.sqrt(qq * vv);
  }
  let sum = 0;
  for (let i = 0; i < q.length; i++) sum += (q[i] - v[i]) ** 2;
  return Math.sqrt(sum);
}

/** Is score a nearer than score b under `metric`? */
export const nearer = (metric: Metric, a: number, b: number) => (metric === 'cosine' ? a > b : a < b);

/** Every row scored and ordered nearest first (ties: earlier insertion first). */
export function referenceRanking(metric: Metric, query: ArrayLike<number>, rows: readonly ReferenceRow[]): (ScoredId & { seq: number })[] {
  return rows
    .map((row) => ({ id: row.id, seq: row.seq, score: referenceScore(metric, query, row.vector) }))
    .sort((a, b) => (a.score === b.score ? a.seq - b.seq : nearer(metric, a.score, b.score) ? -1 : 1));
}

export function referenceSearch(metric: Metric, query: ArrayLike<number>, rows: readonly ReferenceRow[], topK: number): ScoredId[] {
  return referenceRanking(metric, query, rows)
    .slice(0, topK)
    .map(({ id, score }) => ({ id, score }));
}

/** Tolerances: float32 accumulation against float64. */
export const SCORE_TOLERANCE = 1e-5;
export const TIE_TOLERANCE = 1e-6;
/**
 * The simd128 and relaxed-SIMD builds: largest difference between their scores
 * of one row (relative to max(1, |score|)), and between the reference scores of
 * two rows they may order differently. Measured: 1.8e-7 at most (docs/api.md).
 */
export const BUILDS_SCORE_BOUND = 1e-6;
const close = (a: number, b: number, tol: number) => Math.abs(a - b) <= tol * Math.max(1, Math.abs(b));

/**
 * Assert that `actual` is the exact top-K of `rows`: same length as the
 * reference, every score within SCORE_TOLERANCE of the reference score of its
 * id, and at every rank an id whose reference score equals the reference
 * score of that rank to TIE_TOLERANCE (so ids may differ from the reference
 * only where the reference itself has a near-tie).
 */
export function expectSameTopK(
  metric: Metric,
  actual: readonly ScoredId[],
  query: ArrayLike<number>,
  rows: readonly ReferenceRow[],
  topK: number,
  label = '',
): void {
  const ranking = referenceRanking(metric, query, rows);
  const expected = ranking.slice(0, topK);
  const scoreOf = new Map(ranking.map((r) => [r.id, r.score]));
  expect(
    actual.map((a) => a.id),
    `${label} result count`,
  ).to.have.length(expected.length);
  expect(new Set(actual.map((a) => a.id)).size, `${label} distinct ids`).to.equal(actual.length);
  actual.forEach((hit, rank) => {
    const ref = scoreOf.get(hit.id);
    expect(ref, `${label} rank ${rank}: ${hit.id} is not a stored id`).to.not.equal(undefined);
    expect(close(hit.score, ref!, SCORE_TOLERANCE), `${label} rank ${rank}: score ${hit.score} of ${hit.id}, reference ${ref}`).to.equal(true);
    if (hit.id !== expected[rank].id) {
      expect(
        close(ref!, expected[rank].score, TIE_TOLERANCE),
        `${label} rank ${rank}: got ${hit.id} (${ref}), reference ${expected[rank].id} (${expected[rank].score})`,
      ).to.equal(true);
    }
  });
}
