// Throughput probes for bench/experiments/relaxed-madd.ts (compiled with asc
// --enable simd,relaxed-simd when it runs; not part of the service's kernel):
// the tiles' loop shape (fp-peak/probe.ts's) over 1 KB in L1 with separate
// multiplies and adds, and with relaxed_madd; and 8 or 12 independent
// chains of each with the operands in registers.

@inline function fill(a: f32, b: f32): void {
  for (let i = 0; i < 256; i++) store<f32>(<usize>i << 2, a + <f32>i * b * 1e-3);
}

@inline function madd(a: v128, b: v128, acc: v128, fused: bool): v128 {
  return fused ? f32x4.relaxed_madd(a, b, acc) : f32x4.add(acc, f32x4.mul(a, b));
}

@inline function tileLoop(n: i32, fused: bool): f32 {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
  let o: usize = 0;
  for (let i = 0; i < n; i++) {
    const x = v128.load(o), y = v128.load(o, 16);
    const q0 = v128.load(o, 32), q1 = v128.load(o, 48), q2 = v128.load(o, 64), q3 = v128.load(o, 80);
    a0 = madd(q0, x, a0, fused); a1 = madd(q1, x, a1, fused); a2 = madd(q2, x, a2, fused); a3 = madd(q3, x, a3, fused);
    b0 = madd(q0, y, b0, fused); b1 = madd(q1, y, b1, fused); b2 = madd(q2, y, b2, fused); b3 = madd(q3, y, b3, fused);
    o = (o + 32) & 511;
  }
  const s = f32x4.add(f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3)), f32x4.add(f32x4.add(b0, b1), f32x4.add(b2, b3)));
  return f32x4.extract_lane(s, 0);
}

/** The tile loop, multiply then add: 8 multiply-adds a step. */
export function tilePairs(n: i32, a: f32, b: f32): f32 {
  fill(a, b);
  return tileLoop(n, false);
}

/** The tile loop with relaxed_madd: 8 multiply-adds a step. */
export function tileFused(n: i32, a: f32, b: f32): f32 {
  fill(a, b);
  return tileLoop(n, true);
}

@inline function chains(n: i32, a: f32, fused: bool): f32 {
  const x = f32x4.splat(a), y = f32x4.splat(<f32>0.999);
  let a0 = x, a1 = x, a2 = x, a3 = x, a4 = x, a5 = x, a6 = x, a7 = x, a8 = x, a9 = x, a10 = x, a11 = x;
  for (let i = 0; i < n; i++) {
    a0 = madd(a0, y, x, fused); a1 = madd(a1, y, x, fused); a2 = madd(a2, y, x, fused); a3 = madd(a3, y, x, fused);
    a4 = madd(a4, y, x, fused); a5 = madd(a5, y, x, fused); a6 = madd(a6, y, x, fused); a7 = madd(a7, y, x, fused);
    a8 = madd(a8, y, x, fused); a9 = madd(a9, y, x, fused); a10 = madd(a10, y, x, fused); a11 = madd(a11, y, x, fused);
  }
  const s = f32x4.add(f32x4.add(f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3)), f32x4.add(f32x4.add(a4, a5), f32x4.add(a6, a7))), f32x4.add(f32x4.add(a8, a9), f32x4.add(a10, a11)));
  return f32x4.extract_lane(s, 0);
}

/** 12 independent multiply-then-add chains in registers: 12 multiply-adds an iteration. */
export function chainPairs(n: i32, a: f32): f32 {
  return chains(n, a, false);
}

/** 12 independent relaxed_madd chains in registers. */
export function chainFused(n: i32, a: f32): f32 {
  return chains(n, a, true);
}
