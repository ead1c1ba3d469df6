// Seeded random data, so a failing test fails the same way every run.

import { rng } from '../../bench/lib/data.js';

export type Rng = () => number;

/** mulberry32 (the benchmarks' generator): floats in [0, 1). */
export const seededRng: (seed: number) => Rng = rng;

/** An integer in [0, n). */
export const randomInt = (rng: Rng, n: number) => Math.floor(rng() * n);

/** Components uniform in [-1, 1); never the zero vector (cosine rejects it). */
export function randomVector(rng: Rng, dim: number): number[] {
  const out = new Array<number>(dim);
  let nonZero = false;
  for (let i = 0; i < dim; i++) {
    out[i] = rng() * 2 - 1;
    if (out[i] !== 0) nonZero = true;
  }
  if (!nonZero) out[0] = 1;
  return out;
}

export function randomVectors(rng: Rng, count: number, dim: number): number[][] {
  return Array.from({ length: count }, () => randomVector(rng, dim));
}

/** Fisher-Yates shuffle of a copy. */
export function shuffled<T>(rng: Rng, items: readonly T[]): T[] {
  const out = items.slice();
  for (let i = out.length - 1; i > 0; i--) {
    const j = randomInt(rng, i + 1);
    [out[i], out[j]] = [out[j], out[i]];
  }
  return out;
}
