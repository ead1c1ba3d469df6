// Seeded random data, so a failing test fails the same way every run.

export type Rng = () => number;

/** mulberry32: a small, fast, well-mixed 32-bit PRNG; returns floats in [0, 1). */
export function seededRng(seed: number): Rng {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

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
