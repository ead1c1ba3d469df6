// f32x4 inner loops over whole 4-float chunks, then a scalar tail: every
// dimension from 1 up is exact, none is padded.

// Query blocks (search-many) give each query exactly the key the single-query
// scan below gives it, so a query's scores do not depend on how many queries
// come with it: that scan sums the even 4-float chunks and the odd ones in
// two accumulators, adds them, reduces the lanes with hsum4 and then adds the
// dim % 4 tail, summed from 0 in order. The blocks make the same sums: one
// loop over the even chunks, one over the odd ones (both read the row with a
// 32-byte step; the second finds it in L1), then the same reduction and tail.

/** Lane j of the result = the horizontal sum of the j-th argument (two transposing shuffles, three adds). */
@inline function hsum4(a: v128, b: v128, c: v128, d: v128): v128 {
  const ab = f32x4.add(v128.shuffle<f32>(a, b, 0, 4, 1, 5), v128.shuffle<f32>(a, b, 2, 6, 3, 7));
  const cd = f32x4.add(v128.shuffle<f32>(c, d, 0, 4, 1, 5), v128.shuffle<f32>(c, d, 2, 6, 3, 7));
  return f32x4.add(v128.shuffle<f32>(ab, cd, 0, 1, 4, 5), v128.shuffle<f32>(ab, cd, 2, 3, 6, 7));
}

/** q * v, or (q - v)^2 for l2: one term of a sum. */
@inline function term(q: v128, v: v128, l2: bool): v128 {
  if (!l2) return f32x4.mul(q, v);
  const d = f32x4.sub(q, v);
  return f32x4.mul(d, d);
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

/**
 * dot(q_j, v) (or squared distances, `l2`) for four queries q_0..q_3
 * stored `stride` bytes apart, as the four lanes of the result. Each 16
 * bytes of v is loaded once for all four. Two loops of the same shape, not
 * one over both halves: one loop would hold 8 accumulators, 2 row chunks and
 * the 8 query chunks V8 loads up front, more than the 15 free xmm registers.
 */
@inline export function rows4(q: usize, stride: usize, v: usize, dim: i32, l2: bool): v128 {
  let a0 = f32x4.splat(0), a1 = f32x4.splat(0), a2 = f32x4.splat(0), a3 = f32x4.splat(0);
  let b0 = f32x4.splat(0), b1 = f32x4.splat(0), b2 = f32x4.splat(0), b3 = f32x4.splat(0);
  const q1 = q + stride, q2 = q1 + stride, q3 = q2 + stride;
  const end4 = <usize>(dim & ~3) << 2;
  for (let o: usize = 0; o < end4; o += 32) {
    const x = v128.load(v + o);
    a0 = f32x4.add(a0, term(v128.load(q + o), x, l2));
    a1 = f32x4.add(a1, term(v128.load(q1 + o), x, l2));
    a2 = f32x4.add(a2, term(v128.load(q2 + o), x, l2));
    a3 = f32x4.add(a3, term(v128.load(q3 + o), x, l2));
  }
  for (let o: usize = 16; o < end4; o += 32) {
    const x = v128.load(v + o);
    b0 = f32x4.add(b0, term(v128.load(q + o), x, l2));
    b1 = f32x4.add(b1, term(v128.load(q1 + o), x, l2));
    b2 = f32x4.add(b2, term(v128.load(q2 + o), x, l2));
    b3 = f32x4.add(b3, term(v128.load(q3 + o), x, l2));
  }
  let sums = hsum4(f32x4.add(a0, b0), f32x4.add(a1, b1), f32x4.add(a2, b2), f32x4.add(a3, b3));
  const end = <usize>dim << 2;
  if (end4 < end) {
    sums = f32x4.add(sums, f32x4(
      tail1(q, v, end4, end, l2), tail1(q1, v, end4, end, l2),
      tail1(q2, v, end4, end, l2), tail1(q3, v, end4, end, l2)));
  }
  return sums;
}

/** The even-chunk sums of a 6-query block between its two passes (six v128). */
const evenSums: usize = memory.data(96, 16);

// Six queries per pass: each 16 bytes of v is loaded once for six products.
// The queries are read from `block`, where interleave6 put their 4-float
// chunks side by side (96 bytes per chunk), so the loop reads them at
// constant offsets from one pointer. Six, not eight: V8 loads every operand
// of the loop body up front, and eight queries (8 accumulators + 9 loads)
// need more than the 15 free xmm registers, so two accumulators were
// spilled each step (measured 8% slower for 16 queries than 6 + 6 + 4); for
// the same reason the even pass leaves its six sums in memory (evenSums)
// rather than in registers during the odd pass.

/**
 * The six queries' terms summed over every other chunk of v from byte
 * `from`: the even pass (from 0) stores its sums at evenSums; the odd pass
 * (from 16) adds them and writes the six reduced sums to out[0..6).
 */
@inline function pass6(block: usize, v: usize, from: usize, end4: usize, l2: bool, out: usize): void {
  let acc0 = f32x4.splat(0), acc1 = f32x4.splat(0), acc2 = f32x4.splat(0);
  let acc3 = f32x4.splat(0), acc4 = f32x4.splat(0), acc5 = f32x4.splat(0);
  let p = block + from * 6;
  for (let o = from; o < end4; o += 32, p += 192) {
    const x = v128.load(v + o);
    acc0 = f32x4.add(acc0, term(v128.load(p), x, l2));
    acc1 = f32x4.add(acc1, term(v128.load(p, 16), x, l2));
    acc2 = f32x4.add(acc2, term(v128.load(p, 32), x, l2));
    acc3 = f32x4.add(acc3, term(v128.load(p, 48), x, l2));
    acc4 = f32x4.add(acc4, term(v128.load(p, 64), x, l2));
    acc5 = f32x4.add(acc5, term(v128.load(p, 80), x, l2));
  }
  if (from == 0) {
    v128.store(evenSums, acc0); v128.store(evenSums, acc1, 16); v128.store(evenSums, acc2, 32);
    v128.store(evenSums, acc3, 48); v128.store(evenSums, acc4, 64); v128.store(evenSums, acc5, 80);
    return;
  }
  const zero = f32x4.splat(0);
  v128.store(out, hsum4(
    f32x4.add(v128.load(evenSums), acc0), f32x4.add(v128.load(evenSums, 16), acc1),
    f32x4.add(v128.load(evenSums, 32), acc2), f32x4.add(v128.load(evenSums, 48), acc3)));
  v128.store(out, hsum4(f32x4.add(v128.load(evenSums, 64), acc4), f32x4.add(v128.load(evenSums, 80), acc5), zero, zero), 16);
}

/** dot(q_j, v) (or squared distances, `l2`) for six queries, to out[0..6) (16-byte aligned, 32 bytes). */
@inline export function rows6(q: usize, block: usize, stride: usize, v: usize, dim: i32, l2: bool, out: usize): void {
  const end4 = <usize>(dim & ~3) << 2;
  pass6(block, v, 0, end4, l2, out);
  pass6(block, v, 16, end4, l2, out);
  const end = <usize>dim << 2;
  if (end4 < end) {
    for (let j = 0; j < 6; j++) {
      const at = out + (<usize>j << 2);
      store<f32>(at, load<f32>(at) + tail1(q + <usize>j * stride, v, end4, end, l2));
    }
  }
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
    a0 = f32x4.add(a0, f32x4.mul(x, v128.load(v0 + o)));
    b0 = f32x4.add(b0, f32x4.mul(y, v128.load(v0 + o, 16)));
    a1 = f32x4.add(a1, f32x4.mul(x, v128.load(v1 + o)));
    b1 = f32x4.add(b1, f32x4.mul(y, v128.load(v1 + o, 16)));
    a2 = f32x4.add(a2, f32x4.mul(x, v128.load(v2 + o)));
    b2 = f32x4.add(b2, f32x4.mul(y, v128.load(v2 + o, 16)));
    a3 = f32x4.add(a3, f32x4.mul(x, v128.load(v3 + o)));
    b3 = f32x4.add(b3, f32x4.mul(y, v128.load(v3 + o, 16)));
    x = v128.load(q + o, 32); y = v128.load(q + o, 48);
    a0 = f32x4.add(a0, f32x4.mul(x, v128.load(v0 + o, 32)));
    b0 = f32x4.add(b0, f32x4.mul(y, v128.load(v0 + o, 48)));
    a1 = f32x4.add(a1, f32x4.mul(x, v128.load(v1 + o, 32)));
    b1 = f32x4.add(b1, f32x4.mul(y, v128.load(v1 + o, 48)));
    a2 = f32x4.add(a2, f32x4.mul(x, v128.load(v2 + o, 32)));
    b2 = f32x4.add(b2, f32x4.mul(y, v128.load(v2 + o, 48)));
    a3 = f32x4.add(a3, f32x4.mul(x, v128.load(v3 + o, 32)));
    b3 = f32x4.add(b3, f32x4.mul(y, v128.load(v3 + o, 48)));
  }
  if (o < end8) {
    const x = v128.load(q + o), y = v128.load(q + o, 16);
    a0 = f32x4.add(a0, f32x4.mul(x, v128.load(v0 + o)));
    b0 = f32x4.add(b0, f32x4.mul(y, v128.load(v0 + o, 16)));
    a1 = f32x4.add(a1, f32x4.mul(x, v128.load(v1 + o)));
    b1 = f32x4.add(b1, f32x4.mul(y, v128.load(v1 + o, 16)));
    a2 = f32x4.add(a2, f32x4.mul(x, v128.load(v2 + o)));
    b2 = f32x4.add(b2, f32x4.mul(y, v128.load(v2 + o, 16)));
    a3 = f32x4.add(a3, f32x4.mul(x, v128.load(v3 + o)));
    b3 = f32x4.add(b3, f32x4.mul(y, v128.load(v3 + o, 16)));
    o = end8;
  }
  if (o < end4) { // one 4-float chunk left (dim % 8 >= 4)
    const x = v128.load(q + o);
    a0 = f32x4.add(a0, f32x4.mul(x, v128.load(v0 + o)));
    a1 = f32x4.add(a1, f32x4.mul(x, v128.load(v1 + o)));
    a2 = f32x4.add(a2, f32x4.mul(x, v128.load(v2 + o)));
    a3 = f32x4.add(a3, f32x4.mul(x, v128.load(v3 + o)));
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
    a0 = f32x4.add(a0, f32x4.mul(c, c)); b0 = f32x4.add(b0, f32x4.mul(d, d));
    c = f32x4.sub(x, v128.load(v1 + o)); d = f32x4.sub(y, v128.load(v1 + o, 16));
    a1 = f32x4.add(a1, f32x4.mul(c, c)); b1 = f32x4.add(b1, f32x4.mul(d, d));
    c = f32x4.sub(x, v128.load(v2 + o)); d = f32x4.sub(y, v128.load(v2 + o, 16));
    a2 = f32x4.add(a2, f32x4.mul(c, c)); b2 = f32x4.add(b2, f32x4.mul(d, d));
    c = f32x4.sub(x, v128.load(v3 + o)); d = f32x4.sub(y, v128.load(v3 + o, 16));
    a3 = f32x4.add(a3, f32x4.mul(c, c)); b3 = f32x4.add(b3, f32x4.mul(d, d));
    x = v128.load(q + o, 32); y = v128.load(q + o, 48);
    c = f32x4.sub(x, v128.load(v0 + o, 32)); d = f32x4.sub(y, v128.load(v0 + o, 48));
    a0 = f32x4.add(a0, f32x4.mul(c, c)); b0 = f32x4.add(b0, f32x4.mul(d, d));
    c = f32x4.sub(x, v128.load(v1 + o, 32)); d = f32x4.sub(y, v128.load(v1 + o, 48));
    a1 = f32x4.add(a1, f32x4.mul(c, c)); b1 = f32x4.add(b1, f32x4.mul(d, d));
    c = f32x4.sub(x, v128.load(v2 + o, 32)); d = f32x4.sub(y, v128.load(v2 + o, 48));
    a2 = f32x4.add(a2, f32x4.mul(c, c)); b2 = f32x4.add(b2, f32x4.mul(d, d));
    c = f32x4.sub(x, v128.load(v3 + o, 32)); d = f32x4.sub(y, v128.load(v3 + o, 48));
    a3 = f32x4.add(a3, f32x4.mul(c, c)); b3 = f32x4.add(b3, f32x4.mul(d, d));
  }
  if (o < end8) {
    const x = v128.load(q + o), y = v128.load(q + o, 16);
    let c = f32x4.sub(x, v128.load(v0 + o)), d = f32x4.sub(y, v128.load(v0 + o, 16));
    a0 = f32x4.add(a0, f32x4.mul(c, c)); b0 = f32x4.add(b0, f32x4.mul(d, d));
    c = f32x4.sub(x, v128.load(v1 + o)); d = f32x4.sub(y, v128.load(v1 + o, 16));
    a1 = f32x4.add(a1, f32x4.mul(c, c)); b1 = f32x4.add(b1, f32x4.mul(d, d));
    c = f32x4.sub(x, v128.load(v2 + o)); d = f32x4.sub(y, v128.load(v2 + o, 16));
    a2 = f32x4.add(a2, f32x4.mul(c, c)); b2 = f32x4.add(b2, f32x4.mul(d, d));
    c = f32x4.sub(x, v128.load(v3 + o)); d = f32x4.sub(y, v128.load(v3 + o, 16));
    a3 = f32x4.add(a3, f32x4.mul(c, c)); b3 = f32x4.add(b3, f32x4.mul(d, d));
    o = end8;
  }
  if (o < end4) {
    const x = v128.load(q + o);
    let c = f32x4.sub(x, v128.load(v0 + o));
    a0 = f32x4.add(a0, f32x4.mul(c, c));
    c = f32x4.sub(x, v128.load(v1 + o));
    a1 = f32x4.add(a1, f32x4.mul(c, c));
    c = f32x4.sub(x, v128.load(v2 + o));
    a2 = f32x4.add(a2, f32x4.mul(c, c));
    c = f32x4.sub(x, v128.load(v3 + o));
    a3 = f32x4.add(a3, f32x4.mul(c, c));
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
