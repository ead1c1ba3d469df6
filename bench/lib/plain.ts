// The plain TypeScript baseline: the same exact search written as an
// ordinary loop over a Float32Array, with a sorted top-k buffer.

export interface PlainHits {
  rows: Int32Array;
  keys: Float64Array;
}

/** Keys larger-is-nearer like the kernel's: dot * invNorm (cosine) or -squared distance (l2). */
export function plainSearch(
  data: Float32Array,
  dim: number,
  count: number,
  invNorms: Float32Array | null,
  query: Float32Array,
  k: number,
  metric: 'cosine' | 'l2',
): PlainHits {
  const rows = new Int32Array(k).fill(-1);
  const keys = new Float64Array(k).fill(-Infinity);
  let worst = -Infinity;
  for (let r = 0; r < count; r++) {
    const base = r * dim;
    let key = 0;
    if (metric === 'cosine') {
      for (let d = 0; d < dim; d++) key += query[d] * data[base + d];
      key *= invNorms![r];
    } else {
      for (let d = 0; d < dim; d++) {
        const diff = query[d] - data[base + d];
        key -= diff * diff;
      }
    }
    if (key <= worst) continue;
    // Insertion into the sorted buffer (best first); k is small.
    let i = k - 1;
    while (i > 0 && keys[i - 1] < key) {
      keys[i] = keys[i - 1];
      rows[i] = rows[i - 1];
      i--;
    }
    keys[i] = key;
    rows[i] = r;
    worst = keys[k - 1];
  }
  return { rows, keys };
}

export function invNormsOf(data: Float32Array, dim: number, count: number): Float32Array {
  const out = new Float32Array(count);
  for (let r = 0; r < count; r++) {
    let s = 0;
    for (let d = 0; d < dim; d++) s += data[r * dim + d] ** 2;
    out[r] = s > 0 ? 1 / Math.sqrt(s) : 0;
  }
  return out;
}

/**
 * Same ids in the same order. Where the ids differ at a rank, both sides must
 * report the same score there (within eps): a tie that float summation order
 * may break either way. Scores must be on one scale (larger is nearer).
 */
export function sameIds(a: ArrayLike<number>, b: ArrayLike<number>, scoresA?: ArrayLike<number>, scoresB?: ArrayLike<number>, eps = 1e-5): boolean {
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    if (a[i] === b[i]) continue;
    if (!scoresA || !scoresB) return false;
    if (Math.abs(scoresA[i] - scoresB[i]) > eps * Math.max(1, Math.abs(scoresA[i]))) return false;
  }
  return true;
}
