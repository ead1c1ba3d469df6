// Scalar quantization to int8 with one scale per vector (symmetric,
// max-abs): c[i] = round(v[i] / s), s = max|v| / 127. A per-vector scale
// needs no statistics of the whole data set, so a vector is coded once when
// written and never again, whatever is added later; with candidatePool
// rescoring, its recall (bench/int8.bench.ts) is what justifies it.

/** Write the codes of `values` into `out` (zero past values.length); returns the scale s. */
export function quantizeInto(values: Float32Array, out: Int8Array): number {
  let max = 0;
  for (let i = 0; i < values.length; i++) max = Math.max(max, Math.abs(values[i]));
  out.fill(0);
  if (max === 0) return 0;
  const scale = Math.fround(max / 127);
  const inv = 127 / max;
  for (let i = 0; i < values.length; i++) out[i] = Math.max(-127, Math.min(127, Math.round(values[i] * inv)));
  return scale;
}

export function sumOfSquares(values: Float32Array): number {
  let sum = 0;
  for (let i = 0; i < values.length; i++) sum += values[i] * values[i];
  return sum;
}
