// The norm of a vector as the kernel's binding takes it.

/** 1/||v|| in float64 over the float32 values actually stored; 0 for a zero vector. */
export function inverseNorm(values: Float32Array): number {
  // Four running sums: one sum waits on each add in turn, four overlap.
  // Each square is exact in float64.
  const n = values.length;
  const whole = n - (n & 3);
  let s0 = 0,
    s1 = 0,
    s2 = 0,
    s3 = 0;
  let i = 0;
  for (; i < whole; i += 4) {
    const a = values[i],
      b = values[i + 1],
      c = values[i + 2],
      d = values[i + 3];
    s0 += a * a;
    s1 += b * b;
    s2 += c * c;
    s3 += d * d;
  }
  for (; i < n; i++) s0 += values[i] * values[i];
  const sum = s0 + s1 + (s2 + s3);
  return sum > 0 ? 1 / Math.sqrt(sum) : 0;
}
