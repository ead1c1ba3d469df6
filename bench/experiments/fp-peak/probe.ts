// SIMD throughput probes for bench/experiments/fp-peak.ts (compiled with asc when
// the bench runs; not part of the service's kernel): adds and multiplies with
// their operands in registers, which measure what V8's code for f32x4
// arithmetic can issue on this machine, and the tiles' loop over data in L1.

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

/**
 * The tile loop's shape (assembly/simd.ts tilePass) over 1 KB that stays in
 * L1: each step loads two "row" chunks and four "query" chunks and adds
 * their eight products into 8 accumulators. A loop at the top of its
 * function, which V8 leaves as written. (Products of values held in
 * registers do not measure this: V8 peels and spills such a loop, about
 * 4.8 G pairs/s here.)
 */
export function pairs(n: i32, a: f32, b: f32): f32 {
  fill(a, b);
  return tileLoop(n, 0);
}

/**
 * The same loop inside another, `steps` steps a run, as the tiles' pass loop
 * sits inside the row and tile loops: V8 unrolls a loop by how deeply it is
 * nested, and copies this one, loads first in each copy, as it copies the
 * tiles' (with --no-wasm-loop-unrolling it runs within 3 to 5% of `pairs`).
 */
export function pairsNested(n: i32, steps: i32, a: f32, b: f32): f32 {
  fill(a, b);
  let total: f32 = 0;
  for (let done = 0; done < n; done += steps) total += tileLoop(steps, <usize>(done & 15) << 5);
  return total;
}

@inline function fill(a: f32, b: f32): void {
  for (let i = 0; i < 256; i++) store<f32>(<usize>i << 2, a + <f32>i * b * 1e-3);
}

@inline function tileLoop(n: i32, from: usize): f32 {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
  let o = from;
  for (let i = 0; i < n; i++) {
    const x = v128.load(o), y = v128.load(o, 16);
    const q0 = v128.load(o, 32), q1 = v128.load(o, 48), q2 = v128.load(o, 64), q3 = v128.load(o, 80);
    a0 = f32x4.add(a0, f32x4.mul(q0, x)); a1 = f32x4.add(a1, f32x4.mul(q1, x));
    a2 = f32x4.add(a2, f32x4.mul(q2, x)); a3 = f32x4.add(a3, f32x4.mul(q3, x));
    b0 = f32x4.add(b0, f32x4.mul(q0, y)); b1 = f32x4.add(b1, f32x4.mul(q1, y));
    b2 = f32x4.add(b2, f32x4.mul(q2, y)); b3 = f32x4.add(b3, f32x4.mul(q3, y));
    o = (o + 32) & 511;
  }
  return sum8(a0, a1, a2, a3, b0, b1, b2, b3);
}

@inline function sum8(a0: v128, a1: v128, a2: v128, a3: v128, a4: v128, a5: v128, a6: v128, a7: v128): f32 {
  const s = f32x4.add(f32x4.add(f32x4.add(a0, a1), f32x4.add(a2, a3)), f32x4.add(f32x4.add(a4, a5), f32x4.add(a6, a7)));
  return f32x4.extract_lane(s, 0);
}
