// Inverse norms of stored rows, written when rows are stored (a cosine key is
// dot(q, v) * invNorm[v]). Squares of float32 values are exact in float64
// and the sums run in float64, as the binding's inverseNorm does in JS for
// queries; only the order of the adds differs, far below float32 precision,
// so the stored (float32) norm is the same but in rare last-bit cases.

/**
 * invNorms[r] = 1 / sqrt(sum of squares of row r), or 0 for a zero row, for
 * rows [first, first + count) of `dim` floats stored back to back at `vectors`.
 */
export function storeInverseNorms(vectors: usize, dim: i32, first: i32, count: i32, invNorms: usize): void {
  const rowBytes = <usize>dim << 2;
  const end8 = <usize>(dim & ~7) << 2;
  for (let r = first, last = first + count; r < last; r++) {
    const row = vectors + <usize>r * rowBytes;
    // Eight running sums (four f64x2): one sum would wait on each add in turn.
    let a = f64x2.splat(0), b = f64x2.splat(0), c = f64x2.splat(0), d = f64x2.splat(0);
    let o: usize = 0;
    for (; o < end8; o += 32) {
      const x = v128.load(row + o), y = v128.load(row + o, 16);
      const x0 = f64x2.promote_low_f32x4(x), x1 = f64x2.promote_low_f32x4(v128.shuffle<i64>(x, x, 1, 1));
      const y0 = f64x2.promote_low_f32x4(y), y1 = f64x2.promote_low_f32x4(v128.shuffle<i64>(y, y, 1, 1));
      a = f64x2.add(a, f64x2.mul(x0, x0));
      b = f64x2.add(b, f64x2.mul(x1, x1));
      c = f64x2.add(c, f64x2.mul(y0, y0));
      d = f64x2.add(d, f64x2.mul(y1, y1));
    }
    const sums = f64x2.add(f64x2.add(a, b), f64x2.add(c, d));
    let sum = f64x2.extract_lane(sums, 0) + f64x2.extract_lane(sums, 1);
    for (; o < rowBytes; o += 4) {
      const x = <f64>load<f32>(row + o);
      sum += x * x;
    }
    store<f32>(invNorms + (<usize>r << 2), sum > 0 ? <f32>(1.0 / Math.sqrt(sum)) : 0);
  }
}
