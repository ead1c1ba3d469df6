// In-register SIMD throughput probes for bench/fp-peak.bench.ts (compiled
// with asc when the bench runs; not part of the service's kernel). Each loop
// keeps its operands in registers and touches no memory, so it measures what
// V8's code for f32x4 arithmetic can issue on this machine.

/** f32x4 adds into 8 independent accumulators: 8 adds an iteration. */
export function adds(n: i32, a: f32): f32 {
  const x = f32x4.splat(a);
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let a4 = f32x4.splat(0), a5 = f32x4.splat(0), a6 = f32x4.splat(0), a7 = f32x4.splat(0);
  for (let i = 0; i < n; i++) {
    a0 = f32x4.add(a0, x); a1 = f32x4.add(a1, x); a2 = f32x4.add(a2, x); a3 = f32x4.add(a3, x);
    a4 = f32x4.add(a4, x); a5 = f32x4.add(a5, x); a6 = f32x4.add(a6, x); a7 = f32x4.add(a7, x);
  }
  return sum8(a0, a1, a2, a3, a4, a5, a6, a7);
}

/** f32x4 multiplies of 8 independent chains: 8 multiplies an iteration. */
export function muls(n: i32, a: f32): f32 {
  const y = f32x4.splat(1);
  let a0 = f32x4.splat(a), a1 = f32x4.splat(a), a2 = f32x4.splat(a), a3 = f32x4.splat(a);
  let a4 = f32x4.splat(a), a5 = f32x4.splat(a), a6 = f32x4.splat(a), a7 = f32x4.splat(a);
  for (let i = 0; i < n; i++) {
    a0 = f32x4.mul(a0, y); a1 = f32x4.mul(a1, y); a2 = f32x4.mul(a2, y); a3 = f32x4.mul(a3, y);
    a4 = f32x4.mul(a4, y); a5 = f32x4.mul(a5, y); a6 = f32x4.mul(a6, y); a7 = f32x4.mul(a7, y);
  }
  return sum8(a0, a1, a2, a3, a4, a5, a6, a7);
}

/** acc += x * y into 8 independent accumulators: 8 multiply-add pairs an iteration, as the scans do. */
export function pairs(n: i32, a: f32, b: f32): f32 {
  const x = f32x4.splat(a), y = f32x4.splat(b), z = f32x4.splat(b * 0.5);
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let a4 = f32x4.splat(0), a5 = f32x4.splat(0), a6 = f32x4.splat(0), a7 = f32x4.splat(0);
  for (let i = 0; i < n; i++) {
    a0 = f32x4.add(a0, f32x4.mul(x, y)); a1 = f32x4.add(a1, f32x4.mul(x, z));
    a2 = f32x4.add(a2, f32x4.mul(y, z)); a3 = f32x4.add(a3, f32x4.mul(y, y));
    a4 = f32x4.add(a4, f32x4.mul(x, x)); a5 = f32x4.add(a5, f32x4.mul(z, z));
    a6 = f32x4.add(a6, f32x4.mul(z, x)); a7 = f32x4.add(a7, f32x4.mul(z, y));
  }
  return sum8(a0, a1, a2, a3, a4, a5, a6, a7);
}

@inline function sum8(a0: v128, a1: v128, a2: v128, a3: v128, a4: v128, a5: v128, a6: v128, a7: v128): f32 {
  const s = f32x4.add(f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3)), f32x4.add(f32x4.add(a4, a5), f32x4.add(a6, a7)));
  return f32x4.extract_lane(s, 0);
}
