// f32x4 inner loops over whole 4-float chunks, then a scalar tail: every
// dimension from 1 up is exact, none is padded.

// Query tiles (search-many) give each query exactly the key the single-query
// scan below gives it, so a query's scores do not depend on how many queries
// come with it: that scan sums the even 4-float chunks and the odd ones in
// two accumulators, adds them, reduces the lanes with hsum4 and then adds the
// dim % 4 tail, summed from 0 in order. The tiles make the same sums: one
// loop over the even chunks, one over the odd ones (both read the row with a
// 32-byte step; the second finds it in L1), then the same reduction and tail.

/** Lane j of the result = the horizontal sum of the j-th argument (two transposing shuffles, three adds). */
@inline function hsum4(a: v128, b: v128, c: v128, d: v128): v128 {
  const ab = f32x4.add(v128.shuffle<f32>(a, b, 0, 4, 1, 5), v128.shuffle<f32>(a, b, 2, 6, 3, 7));
  const cd = f32x4.add(v128.shuffle<f32>(c, d, 0, 4, 1, 5), v128.shuffle<f32>(c, d, 2, 6, 3, 7));
  return f32x4.add(v128.shuffle<f32>(ab, cd, 0, 1, 4, 5), v128.shuffle<f32>(ab, cd, 2, 3, 6, 7));
}

/**
 * acc + a * b in every lane: a multiply, then an add (two roundings). Every
 * float32 scan sums through here, so a query gets the same key on every
 * path (single, tile, bounded l2). In the relaxed build (--enable
 * relaxed-simd: build/kernel.relaxed.wasm, KERNEL_BUILD=relaxed) it is
 * relaxed_madd, one rounding where V8 has FMA3; both builds' figures are in
 * docs/experiments/2026-11-26-relaxed-build-shipped.md.
 */
@inline function madd(a: v128, b: v128, acc: v128): v128 {
  if (ASC_FEATURE_RELAXED_SIMD) return f32x4.relaxed_madd(a, b, acc);
  return f32x4.add(acc, f32x4.mul(a, b));
}

/** acc + q * v, or acc + (q - v)^2 for l2: one term added to a sum. */
@inline function addTerm(acc: v128, q: v128, v: v128, l2: bool): v128 {
  if (!l2) return madd(q, v, acc);
  const d = f32x4.sub(q, v);
  return madd(d, d, acc);
}

/** The scalar tail [o, end) of one query against one row, summed from 0 in order (the single scan's tailX4 and the blocks alike). */
@inline function tail1(q: usize, v: usize, o: usize, end: usize, l2: bool): f32 {
  let s: f32 = 0;
  for (; o < end; o += 4) {
    const x = load<f32>(q + o), y = load<f32>(v + o);
    s += l2 ? (x - y) * (x - y) : x * y;
  }
  return s;
}

// Register tiles (search-many): four queries x two stored rows, eight
// accumulators, each step loading two row chunks and four query chunks for
// eight products (6 loads + 8 accumulators = 14 of V8's 15 free xmm
// registers). The queries are read from `group`, where interleave4 put their
// 4-float chunks side by side (64 bytes per chunk), so the loop reads them at
// constant offsets from one pointer. Eight independent sums per step keep the
// adders busy where the single scan's four rows would wait on the multiplies.

/**
 * The tile's terms summed over every other chunk from byte `from`: the even
 * pass (from 0) stores its eight sums at out + 32 (eight v128: row 0's four
 * queries, then row 1's); the odd pass (from 16) adds them and writes row 0's
 * four reduced sums to out, row 1's to out + 16.
 */
@inline function tilePass(group: usize, v0: usize, v1: usize, from: usize, end4: usize, l2: bool, out: usize): void {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
  let p = group + (from << 2);
  for (let o = from; o < end4; o += 32, p += 128) {
    const x = v128.load(v0 + o), y = v128.load(v1 + o);
    const q0 = v128.load(p), q1 = v128.load(p, 16), q2 = v128.load(p, 32), q3 = v128.load(p, 48);
    a0 = addTerm(a0, q0, x, l2); a1 = addTerm(a1, q1, x, l2); a2 = addTerm(a2, q2, x, l2); a3 = addTerm(a3, q3, x, l2);
    b0 = addTerm(b0, q0, y, l2); b1 = addTerm(b1, q1, y, l2); b2 = addTerm(b2, q2, y, l2); b3 = addTerm(b3, q3, y, l2);
  }
  const evenSums = out + 32;
  if (from == 0) {
    v128.store(evenSums, a0); v128.store(evenSums, a1, 16); v128.store(evenSums, a2, 32); v128.store(evenSums, a3, 48);
    v128.store(evenSums, b0, 64); v128.store(evenSums, b1, 80); v128.store(evenSums, b2, 96); v128.store(evenSums, b3, 112);
    return;
  }
  v128.store(out, hsum4(
    f32x4.add(v128.load(evenSums), a0), f32x4.add(v128.load(evenSums, 16), a1),
    f32x4.add(v128.load(evenSums, 32), a2), f32x4.add(v128.load(evenSums, 48), a3)));
  v128.store(out, hsum4(
    f32x4.add(v128.load(evenSums, 64), b0), f32x4.add(v128.load(evenSums, 80), b1),
    f32x4.add(v128.load(evenSums, 96), b2), f32x4.add(v128.load(evenSums, 112), b3)), 16);
}

/**
 * dot(q_j, v) (or squared distances, `l2`) for four queries q_0..q_3 (`stride`
 * bytes apart, their chunks interleaved in `group`) and rows v0 and v1: row 0's
 * four sums (lane j = query j) to out, row 1's to out + 16 (16-byte aligned;
 * out holds 160 bytes, the last 128 for the sums between the two passes).
 */
@inline export function tile4x2(q: usize, group: usize, stride: usize, v0: usize, v1: usize, dim: i32, l2: bool, out: usize): void {
  const end4 = <usize>(dim & ~3) << 2;
  tilePass(group, v0, v1, 0, end4, l2, out);
  tilePass(group, v0, v1, 16, end4, l2, out);
  const end = <usize>dim << 2;
  if (end4 < end) {
    v128.store(out, f32x4.add(v128.load(out), queryTails4(q, stride, v0, end4, end, l2)));
    v128.store(out, f32x4.add(v128.load(out, 16), queryTails4(q, stride, v1, end4, end, l2)), 16);
  }
}

/** The scalar tail [o, end) of four queries (`stride` bytes apart) against one row, as lanes. */
@inline function queryTails4(q: usize, stride: usize, v: usize, o: usize, end: usize, l2: bool): v128 {
  return f32x4(tail1(q, v, o, end, l2), tail1(q + stride, v, o, end, l2), tail1(q + 2 * stride, v, o, end, l2), tail1(q + 3 * stride, v, o, end, l2));
}

// Four stored rows per pass for one query (the single-query scan): each 16
// bytes of the query is loaded once for four products, each row keeps two
// accumulators (even and odd 4-float chunks, so a row's adds do not wait on
// each other), and the four rows' sums come out as the lanes of one v128
// (hsum4), so the caller compares four keys with one vector compare.
// The loop body takes 16 floats (two 8-float halves written out): V8 unrolls
// a small loop body itself, and in its unrolled copy loads every operand
// before the arithmetic, so 8 accumulators + 10 loaded values outgrew the 15
// allocatable xmm registers and two accumulators went through the stack each
// step (seen in --print-wasm-code); a body this size is not unrolled and keeps
// 8 accumulators + 2 query chunks + 1 temporary in registers.
// Lane j depends only on row j (the same operations in the same order in
// every lane), so a row gets the same key whichever lane it is scored in.

/** dot(q, v_j) for rows v0..v3, as the four lanes of the result. */
@inline export function dotRowsX4(q: usize, v0: usize, v1: usize, v2: usize, v3: usize, dim: i32): v128 {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
  const end16 = <usize>(dim & ~15) << 2;
  const end8 = <usize>(dim & ~7) << 2;
  const end4 = <usize>(dim & ~3) << 2;
  let o: usize = 0;
  for (; o < end16; o += 64) {
    let x = v128.load(q + o), y = v128.load(q + o, 16);
    a0 = madd(x, v128.load(v0 + o), a0);
    b0 = madd(y, v128.load(v0 + o, 16), b0);
    a1 = madd(x, v128.load(v1 + o), a1);
    b1 = madd(y, v128.load(v1 + o, 16), b1);
    a2 = madd(x, v128.load(v2 + o), a2);
    b2 = madd(y, v128.load(v2 + o, 16), b2);
    a3 = madd(x, v128.load(v3 + o), a3);
    b3 = madd(y, v128.load(v3 + o, 16), b3);
    x = v128.load(q + o, 32); y = v128.load(q + o, 48);
    a0 = madd(x, v128.load(v0 + o, 32), a0);
    b0 = madd(y, v128.load(v0 + o, 48), b0);
    a1 = madd(x, v128.load(v1 + o, 32), a1);
    b1 = madd(y, v128.load(v1 + o, 48), b1);
    a2 = madd(x, v128.load(v2 + o, 32), a2);
    b2 = madd(y, v128.load(v2 + o, 48), b2);
    a3 = madd(x, v128.load(v3 + o, 32), a3);
    b3 = madd(y, v128.load(v3 + o, 48), b3);
  }
  if (o < end8) {
    const x = v128.load(q + o), y = v128.load(q + o, 16);
    a0 = madd(x, v128.load(v0 + o), a0);
    b0 = madd(y, v128.load(v0 + o, 16), b0);
    a1 = madd(x, v128.load(v1 + o), a1);
    b1 = madd(y, v128.load(v1 + o, 16), b1);
    a2 = madd(x, v128.load(v2 + o), a2);
    b2 = madd(y, v128.load(v2 + o, 16), b2);
    a3 = madd(x, v128.load(v3 + o), a3);
    b3 = madd(y, v128.load(v3 + o, 16), b3);
    o = end8;
  }
  if (o < end4) { // one 4-float chunk left (dim % 8 >= 4)
    const x = v128.load(q + o);
    a0 = madd(x, v128.load(v0 + o), a0);
    a1 = madd(x, v128.load(v1 + o), a1);
    a2 = madd(x, v128.load(v2 + o), a2);
    a3 = madd(x, v128.load(v3 + o), a3);
    o = end4;
  }
  let sums = hsum4(f32x4.add(a0, b0), f32x4.add(a1, b1), f32x4.add(a2, b2), f32x4.add(a3, b3));
  const end = <usize>dim << 2;
  if (o < end) sums = f32x4.add(sums, tailX4(q, v0, v1, v2, v3, o, end, false));
  return sums;
}

/** Squared distances from q to rows v0..v3, as the four lanes of the result. */
@inline export function l2RowsX4(q: usize, v0: usize, v1: usize, v2: usize, v3: usize, dim: i32): v128 {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
  const end16 = <usize>(dim & ~15) << 2;
  const end8 = <usize>(dim & ~7) << 2;
  const end4 = <usize>(dim & ~3) << 2;
  let o: usize = 0;
  for (; o < end16; o += 64) {
    let x = v128.load(q + o), y = v128.load(q + o, 16);
    let c = f32x4.sub(x, v128.load(v0 + o)), d = f32x4.sub(y, v128.load(v0 + o, 16));
    a0 = madd(c, c, a0); b0 = madd(d, d, b0);
    c = f32x4.sub(x, v128.load(v1 + o)); d = f32x4.sub(y, v128.load(v1 + o, 16));
    a1 = madd(c, c, a1); b1 = madd(d, d, b1);
    c = f32x4.sub(x, v128.load(v2 + o)); d = f32x4.sub(y, v128.load(v2 + o, 16));
    a2 = madd(c, c, a2); b2 = madd(d, d, b2);
    c = f32x4.sub(x, v128.load(v3 + o)); d = f32x4.sub(y, v128.load(v3 + o, 16));
    a3 = madd(c, c, a3); b3 = madd(d, d, b3);
    x = v128.load(q + o, 32); y = v128.load(q + o, 48);
    c = f32x4.sub(x, v128.load(v0 + o, 32)); d = f32x4.sub(y, v128.load(v0 + o, 48));
    a0 = madd(c, c, a0); b0 = madd(d, d, b0);
    c = f32x4.sub(x, v128.load(v1 + o, 32)); d = f32x4.sub(y, v128.load(v1 + o, 48));
    a1 = madd(c, c, a1); b1 = madd(d, d, b1);
    c = f32x4.sub(x, v128.load(v2 + o, 32)); d = f32x4.sub(y, v128.load(v2 + o, 48));
    a2 = madd(c, c, a2); b2 = madd(d, d, b2);
    c = f32x4.sub(x, v128.load(v3 + o, 32)); d = f32x4.sub(y, v128.load(v3 + o, 48));
    a3 = madd(c, c, a3); b3 = madd(d, d, b3);
  }
  if (o < end8) {
    const x = v128.load(q + o), y = v128.load(q + o, 16);
    let c = f32x4.sub(x, v128.load(v0 + o)), d = f32x4.sub(y, v128.load(v0 + o, 16));
    a0 = madd(c, c, a0); b0 = madd(d, d, b0);
    c = f32x4.sub(x, v128.load(v1 + o)); d = f32x4.sub(y, v128.load(v1 + o, 16));
    a1 = madd(c, c, a1); b1 = madd(d, d, b1);
    c = f32x4.sub(x, v128.load(v2 + o)); d = f32x4.sub(y, v128.load(v2 + o, 16));
    a2 = madd(c, c, a2); b2 = madd(d, d, b2);
    c = f32x4.sub(x, v128.load(v3 + o)); d = f32x4.sub(y, v128.load(v3 + o, 16));
    a3 = madd(c, c, a3); b3 = madd(d, d, b3);
    o = end8;
  }
  if (o < end4) {
    const x = v128.load(q + o);
    let c = f32x4.sub(x, v128.load(v0 + o));
    a0 = madd(c, c, a0);
    c = f32x4.sub(x, v128.load(v1 + o));
    a1 = madd(c, c, a1);
    c = f32x4.sub(x, v128.load(v2 + o));
    a2 = madd(c, c, a2);
    c = f32x4.sub(x, v128.load(v3 + o));
    a3 = madd(c, c, a3);
    o = end4;
  }
  let sums = hsum4(f32x4.add(a0, b0), f32x4.add(a1, b1), f32x4.add(a2, b2), f32x4.add(a3, b3));
  const end = <usize>dim << 2;
  if (o < end) sums = f32x4.add(sums, tailX4(q, v0, v1, v2, v3, o, end, true));
  return sums;
}

/** The scalar tail [o, end) (under 4 floats) of four rows' products or squared differences, as lanes. */
@inline function tailX4(q: usize, v0: usize, v1: usize, v2: usize, v3: usize, o: usize, end: usize, l2: bool): v128 {
  return f32x4(tail1(q, v0, o, end, l2), tail1(q, v1, o, end, l2), tail1(q, v2, o, end, l2), tail1(q, v3, o, end, l2));
}
