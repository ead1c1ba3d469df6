// int8 codes: each stored vector as `stride` signed bytes (its components
// scaled by 127 / max|component|, zero-padded to a multiple of 32), scanned
// against a query already widened to i16, with i32x4.dot_i16x8_s: every
// 16 bytes of a row are one load, two widenings and two pairwise dot
// products into 32-bit lanes (|sum| <= 127 * 127 * 1024 fits easily).

/** sum(q[i] * c[i]) over `stride` codes; q holds i16 values, c int8. */
@inline export function dotI8Row(q16: usize, codes: usize, stride: i32): i32 {
  let acc0 = i32x4.splat(0), acc1 = i32x4.splat(0), acc2 = i32x4.splat(0), acc3 = i32x4.splat(0);
  const end = <usize>stride;
  for (let o: usize = 0; o < end; o += 32) {
    const a = v128.load(codes + o);
    const b = v128.load(codes + o, 16);
    const qo = q16 + (o << 1);
    acc0 = i32x4.add(acc0, i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(a), v128.load(qo)));
    acc1 = i32x4.add(acc1, i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(a), v128.load(qo, 16)));
    acc2 = i32x4.add(acc2, i32x4.dot_i16x8_s(i16x8.extend_low_i8x16_s(b), v128.load(qo, 32)));
    acc3 = i32x4.add(acc3, i32x4.dot_i16x8_s(i16x8.extend_high_i8x16_s(b), v128.load(qo, 48)));
  }
  const s = i32x4.add(i32x4.add(acc0, acc1), i32x4.add(acc2, acc3));
  return i32x4.extract_lane(s, 0) + i32x4.extract_lane(s, 1) + i32x4.extract_lane(s, 2) + i32x4.extract_lane(s, 3);
}
