// Base64 to float32, decoded with SIMD for the HTTP body reader
// (src/http/base64-decoder.ts): the vectorised decoder of Muła and Lemire
// ("Faster Base64 Encoding and Decoding using AVX2 instructions", in its
// 128-bit form), with wasm's i8x16.swizzle for the nibble lookups and
// i32x4.dot_i16x8_s to pack four 6-bit values into three bytes.
//
// It accepts what Node's Buffer decodes without skipping anything, which is
// what the reader has always accepted (and what the OpenAPI document
// publishes): A-Z a-z 0-9 and both "+ /" and the URL-safe "- _" (Node reads
// either, also mixed), length a multiple of 4, "=" only as one or two final
// characters. Leftover bits of the last character before padding are
// ignored, as Node does. Flat functions over addresses; nothing allocates.

/** decodeFloat32Base64's result when the text is not such base64. */
export const BASE64_BAD_TEXT: i32 = -1;
/** decodeFloat32Base64's result when a decoded float's magnitude exceeds the bound (or is NaN/infinite). */
export const BASE64_OUT_OF_RANGE: i32 = -2;

// The lookup tables, 16 bytes each, in static data: loaded into locals once
// per call, not written as v128 constants (which V8 would rebuild from
// immediates at every use in the loop).
// - LO_CHECK / HI_CHECK, validity (Muła's scheme): each high nibble has a
//   bit (0x10 for all that hold no base64 character), and LO_CHECK[lo] has
//   the bits of every high nibble h for which (h << 4 | lo) is not in the
//   alphabet; a byte is bad when LO_CHECK[lo] & HI_CHECK[hi] != 0. Bytes >=
//   0x80 have hi >= 8 (0x10, set in every LO_CHECK entry). 0x5_ and 0x7_
//   have separate bits because "_" (0x5f) is valid and DEL (0x7f) is not.
//   HI_CHECK: 2 -> 0x01, 3 -> 0x02, 4 -> 0x04, 5 -> 0x08, 6 -> 0x20, 7 -> 0x40.
// - ROLL_HI: what to add to a valid character to get its 6-bit value, by
//   high nibble: digits +4, A-Z -65, a-z -71 ("_" gets 33 more apart).
// - ROLL_2X, by the character minus 0x20 (swizzle gives 0 past index 15):
//   "+" (0x2b) +19 -> 62, "-" (0x2d) +17 -> 62, "/" (0x2f) +16 -> 63.
// - COMPACT: each i32 lane holds a<<18 | b<<12 | c<<6 | d; its three low
//   bytes, high first, for 12 bytes.
const TABLES: usize = memory.data<u8>([
  0x35, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x13, 0x5a, 0x5b, 0x5a, 0x5b, 0x52, // LO_CHECK
  0x10, 0x10, 0x01, 0x02, 0x04, 0x08, 0x20, 0x40, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, // HI_CHECK
  0, 0, 0, 4, 0xbf, 0xbf, 0xb9, 0xb9, 0, 0, 0, 0, 0, 0, 0, 0, // ROLL_HI
  0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 19, 0, 17, 0, 16, // ROLL_2X
  2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, 0xff, 0xff, 0xff, 0xff, // COMPACT
  // Splats, also loaded (binaryen folds a splat of a constant into a v128 constant).
  0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, 0x0f, // nibble
  0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, 0x20, // 0x20
  0x5f, 0x5f, 0x5f, 0x5f, 0x5f, 0x5f, 0x5f, 0x5f, 0x5f, 0x5f, 0x5f, 0x5f, 0x5f, 0x5f, 0x5f, 0x5f, // "_"
  33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, 33, // "_" - 0x5_'s roll
  0x00, 0x10, 0x01, 0x00, 0x00, 0x10, 0x01, 0x00, 0x00, 0x10, 0x01, 0x00, 0x00, 0x10, 0x01, 0x00, // i16 pairs 0x1000, 1
], 16);

/** The 6-bit value of one character, or -1 outside the alphabet. */
// @ts-ignore: decorator
@inline function sextet(c: u32): i32 {
  if (c - 0x41 < 26) return <i32>c - 0x41;
  if (c - 0x61 < 26) return <i32>c - 0x61 + 26;
  if (c - 0x30 < 10) return <i32>c - 0x30 + 52;
  if (c == 0x2b || c == 0x2d) return 62;
  if (c == 0x2f || c == 0x5f) return 63;
  return -1;
}

/**
 * The float32 values of the base64 text [src, src + length) written to
 * `dst` (little-endian, as the bytes decode), checked against `maxAbsBits`
 * (the bit pattern of the largest allowed magnitude; NaN and infinities are
 * above any finite one). Returns the number of floats, BASE64_BAD_TEXT when
 * the text is not padded base64 of a whole number (>= 1) of floats, or
 * BASE64_OUT_OF_RANGE. Writes only [dst, dst + 4 * floats) and only on
 * success is all of it meaningful; `dst` may be any address.
 */
export function decodeFloat32Base64(src: usize, length: usize, dst: usize, maxAbsBits: i32): i32 {
  if (length == 0 || (length & 3) != 0) return BASE64_BAD_TEXT;
  const pad: usize = load<u8>(src + length - 1) == 0x3d ? (load<u8>(src + length - 2) == 0x3d ? 2 : 1) : 0;
  const bytes = (length >> 2) * 3 - pad;
  if ((bytes & 3) != 0 || bytes == 0) return BASE64_BAD_TEXT;
  // Whole 16-character blocks before the last group of four (which may hold
  // padding) go through SIMD; each stores 16 bytes of which 12 count, so
  // full stores only while at least 4 more output bytes follow in SIMD.
  const simdEnd = length >= 4 + 16 ? src + ((length - 4) & ~15) : src;
  let s = src;
  let d = dst;
  let bad = v128.splat<i32>(0);
  if (s < simdEnd) {
    const loCheck = v128.load(TABLES), hiCheck = v128.load(TABLES, 16), rollHi = v128.load(TABLES, 32);
    const roll2x = v128.load(TABLES, 48), compact = v128.load(TABLES, 64);
    const nibble = v128.load(TABLES, 80), minus20 = v128.load(TABLES, 96), underscore = v128.load(TABLES, 112);
    const fix5f = v128.load(TABLES, 128), weights = v128.load(TABLES, 144);
    for (; s < simdEnd; s += 16, d += 12) {
      const text = v128.load(s);
      const hi = v128.and(i16x8.shr_u(text, 4), nibble);
      const lo = v128.and(text, nibble);
      bad = v128.or(bad, v128.and(i8x16.swizzle(loCheck, lo), i8x16.swizzle(hiCheck, hi)));
      const roll = i8x16.add(
        i8x16.add(i8x16.swizzle(rollHi, hi), i8x16.swizzle(roll2x, i8x16.sub(text, minus20))),
        v128.and(i8x16.eq(text, underscore), fix5f),
      );
      const values = i8x16.add(text, roll);
      // Per 16-bit lane (first character low): a << 6 | b (two shifts clear b's bits
      // from the low half: no mask constant); then per 32-bit lane ab << 12 | cd.
      const pairs = v128.or(i16x8.shr_u(i16x8.shl(values, 10), 4), i16x8.shr_u(values, 8));
      const out = i8x16.swizzle(i32x4.dot_i16x8_s(pairs, weights), compact);
      if (s + 16 < simdEnd) {
        v128.store(d, out);
      } else {
        // The last block: exactly its 12 bytes.
        v128.store64_lane(d, out, 0);
        v128.store32_lane(d, out, 2, 8);
      }
    }
  }
  if (v128.any_true(bad)) return BASE64_BAD_TEXT;
  // The remaining groups of four, the last with its padding.
  const end = src + length;
  for (; s < end; s += 4) {
    const a = sextet(load<u8>(s)), b = sextet(load<u8>(s, 1));
    const c3 = load<u8>(s, 2), c4 = load<u8>(s, 3);
    const last = s + 4 == end;
    const c = last && pad == 2 ? 0 : sextet(c3);
    const e = last && pad >= 1 ? 0 : sextet(c4);
    if ((a | b | c | e) < 0) return BASE64_BAD_TEXT;
    const word = (a << 18) | (b << 12) | (c << 6) | e;
    store<u8>(d, word >> 16);
    if (!(last && pad == 2)) store<u8>(d, word >> 8, 1);
    if (!(last && pad >= 1)) store<u8>(d, word, 2);
    d += 3;
  }
  const floats = <i32>(bytes >> 2);
  return withinBound(dst, floats, maxAbsBits) ? floats : BASE64_OUT_OF_RANGE;
}

/** Every one of `count` floats at `at` has |bits| <= maxAbsBits (compared as integers). */
function withinBound(at: usize, count: i32, maxAbsBits: i32): bool {
  const mask = i32x4.splat(0x7fffffff);
  const bound = i32x4.splat(maxAbsBits);
  let over = v128.splat<i32>(0);
  let i = 0;
  for (; i + 4 <= count; i += 4) {
    over = v128.or(over, i32x4.gt_s(v128.and(v128.load(at + (<usize>i << 2)), mask), bound));
  }
  let tail = 0;
  for (; i < count; i++) tail |= <i32>((load<i32>(at + (<usize>i << 2)) & 0x7fffffff) > maxAbsBits);
  return !v128.any_true(over) && tail == 0;
}
