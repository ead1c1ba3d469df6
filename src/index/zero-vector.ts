// Cosine is undefined for a zero vector (and unstable for one too small for
// float32): an add and a cosine query refuse one with ZERO_VECTOR.
import { apiError } from '../errors.js';
import { inverseNorm } from '../kernel/inverse-norm.js';

/**
 * A component this large makes the sum of squares at least 1e-60, far from
 * both zero and the ~1e-77 below which the inverse norm overflows float32.
 */
const SURELY_NONZERO = 1e-30;

export function isZero(values: Float32Array): boolean {
  // Almost every vector has a large component among its first few; only the
  // rest need the norm (the kernel computes it again when the row is written).
  for (let i = 0; i < values.length; i++) {
    const magnitude = Math.abs(values[i]);
    if (magnitude >= SURELY_NONZERO && magnitude < Infinity) return false;
  }
  const inv = inverseNorm(values);
  return inv === 0 || !Number.isFinite(Math.fround(inv));
}

export function zeroVector(path: string) {
  return apiError('ZERO_VECTOR', 'cosine similarity is undefined for a zero vector', { path });
}

export function assertNonZero(values: Float32Array, path: () => string): void {
  if (isZero(values)) throw zeroVector(path());
}
