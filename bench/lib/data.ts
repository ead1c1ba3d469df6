// Synthetic data for the benchmarks, from a seeded generator so every run
// (and every peer inside one run) sees the same vectors.

/** mulberry32: small, fast, good enough for benchmark data. */
export function rng(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** `n` vectors of `dim` components uniform in [-1, 1), back to back. */
export function uniformVectors(n: number, dim: number, seed = 1): Float32Array {
  const next = rng(seed);
  const out = new Float32Array(n * dim);
  for (let i = 0; i < out.length; i++) out[i] = next() * 2 - 1;
  return out;
}

function gaussian(next: () => number): number {
  const u = 1 - next();
  return Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * next());
}

/**
 * A Gaussian mixture like real embeddings: `clusters` centres, and every
 * dimension has its own scale (a few dimensions carry most of the variance).
 */
export function clusteredVectors(n: number, dim: number, seed = 2, clusters = 64): Float32Array {
  const next = rng(seed);
  const scales = Float32Array.from({ length: dim }, () => 0.05 + Math.exp(gaussian(next) * 1.0));
  const centres = new Float32Array(clusters * dim);
  for (let i = 0; i < centres.length; i++) centres[i] = gaussian(next) * scales[i % dim];
  const out = new Float32Array(n * dim);
  for (let r = 0; r < n; r++) {
    const c = Math.floor(next() * clusters) * dim;
    for (let d = 0; d < dim; d++) out[r * dim + d] = centres[c + d] + 0.5 * gaussian(next) * scales[d];
  }
  return out;
}

/** Row i of a packed array. */
export const rowOf = (data: Float32Array, dim: number, i: number) => data.subarray(i * dim, (i + 1) * dim);
