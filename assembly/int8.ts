// int8 codes: each stored vector as `stride` signed bytes (its components
// scaled by 127 / max|component|, zero-padded to a multiple of 32), scanned
// against a query already widened to i16, with i32x4.dot_i16x8_s: every
// 16 bytes of a row are one load, two widenings and two pairwise dot
// products into 32-bit lanes (|sum| <= 127 * 127 * 1024 fits easily).
// Four rows are scanned per pass (see searchInt8 in int8-search.ts).

/**
 * sum(q[i] * c_j[i]) over `stride` codes for four rows c0..c3, as the lanes
 * of an i32x4; q holds i16 values, c int8. Each 16 i16 of the query are
 * loaded once for the four rows. Integer sums are exact, so a lane does not
 * depend on the order of the adds or on the other lanes. One accumulator per
 * row (an integer add waits one cycle); the body takes 32 codes per row.
 */
@inline export function dotI8RowsX4(q16: usize, c0: usize, c1: usize, c2: usize, c3: usize, stride: i32): v128 {
  let a0 = i32x4.splat(0), a1 = i32x4.splat(0), a2 = i32x4.splat(0), a3 = i32x4.splat(0);
  const end = <usize>stride;
  for (let o: usize = 0; o < end; o += 32) {
    const qo = q16 + (o << 1);
    let qa = v128.load(qo), qb = v128.load(qo, 16);
    let c = v128.load(c0 + o);
    a0 = i32x4.add(a0, i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(c), qa), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(c), qb)));
    c = v128.load(c1 + o);
    a1 = i32x4.add(a1, i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(c), qa), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(c), qb)));
    c = v128.load(c2 + o);
    a2 = i32x4.add(a2, i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(c), qa), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(c), qb)));
    c = v128.load(c3 + o);
    a3 = i32x4.add(a3, i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(c), qa), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(c), qb)));
    qa = v128.load(qo, 32); qb = v128.load(qo, 48);
    c = v128.load(c0 + o, 16);
    a0 = i32x4.add(a0, i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(c), qa), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(c), qb)));
    c = v128.load(c1 + o, 16);
    a1 = i32x4.add(a1, i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(c), qa), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(c), qb)));
    c = v128.load(c2 + o, 16);
    a2 = i32x4.add(a2, i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(c), qa), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(c), qb)));
    c = v128.load(c3 + o, 16);
    a3 = i32x4.add(a3, i32x4.add(i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(c), qa), i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(c), qb)));
  }
  // Lane j = the sum of a_j's lanes (two transposing shuffles, three adds).
  const ab = i32x4.add(v128.shuffle<i32>(a0, a1, 0, 4, 1, 5), v128.shuffle<i32>(a0, a1, 2, 6, 3, 7));
  const cd = i32x4.add(v128.shuffle<i32>(a2, a3, 0, 4, 1, 5), v128.shuffle<i32>(a2, a3, 2, 6, 3, 7));
  return i32x4.add(v128.shuffle<i32>(ab, cd, 0, 1, 4, 5), v128.shuffle<i32>(ab, cd, 2, 3, 6, 7));
}
