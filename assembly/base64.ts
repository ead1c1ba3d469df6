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

// Validity (Muła's scheme): each high nibble has a bit (0x10 for all that
// hold no base64 character), and LO_CHECK[lo] has the bits of every high
// nibble h for which (h << 4 | lo) is not in the alphabet; a byte is bad
// when LO_CHECK[lo] & HI_CHECK[hi] != 0. Bytes >= 0x80 have hi >= 8 (0x10,
// set in every LO_CHECK entry). Separate bits for 0x5_ and 0x7_ because
// "_" (0x5f) is valid and DEL (0x7f) is not.
//   hi:  2 -> 0x01, 3 -> 0x02, 4 -> 0x04, 5 -> 0x08, 6 -> 0x20, 7 -> 0x40
const LO_CHECK: v128 = i8x16(0x35, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x13, 0x5a, 0x5b, 0x5a, 0x5b, 0x52);
const HI_CHECK: v128 = i8x16(0x10, 0x10, 0x01, 0x02, 0x04, 0x08, 0x20, 0x40, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10, 0x10);
// What to add to a valid character to get its 6-bit value, by high nibble:
// digits +4, A-Z -65, a-z -71; 0x2_ ("+ - /") by low nibble from ROLL_2X,
// "_" apart.
const ROLL_HI: v128 = i8x16(0, 0, 0, 4, -65, -65, -71, -71, 0, 0, 0, 0, 0, 0, 0, 0);
// "+" (0x2b) -> 62, "-" (0x2d) -> 62, "/" (0x2f) -> 63.
const ROLL_2X: v128 = i8x16(0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 19, 0, 17, 0, 16);
// Each i32 lane holds a<<18 | b<<12 | c<<6 | d: its three low bytes, high first.
const COMPACT: v128 = i8x16(2, 1, 0, 6, 5, 4, 10, 9, 8, 14, 13, 12, -1, -1, -1, -1);

/** Lanes nonzero where the character (high nibble `hi`, low nibble `lo`) is outside the alphabet. */
// @ts-ignore: decorator
@inline function invalidLanes(hi: v128, lo: v128): v128 {
  return v128.and(i8x16.swizzle(LO_CHECK, lo), i8x16.swizzle(HI_CHECK, hi));
}

/** The 6-bit values of 16 valid characters (garbage in the lanes invalidLanes flags). */
// @ts-ignore: decorator
@inline function sextets(text: v128, hi: v128, lo: v128): v128 {
  let roll = i8x16.swizzle(ROLL_HI, hi);
  roll = v128.or(roll, v128.and(i8x16.swizzle(ROLL_2X, lo), i8x16.eq(hi, i8x16.splat(2))));
  roll = v128.bitselect(i8x16.splat(-32), roll, i8x16.eq(text, i8x16.splat(0x5f)));
  return i8x16.add(text, roll);
}

/** 16 sextets (four groups a b c d) as 12 bytes in the low lanes. */
// @ts-ignore: decorator
@inline function pack(values: v128): v128 {
  // Per 16-bit lane (first character low): a << 6 | b; then per 32-bit lane ab << 12 | cd.
  const pairs = v128.or(v128.and(i16x8.shl(values, 6), i16x8.splat(0x0fc0)), i16x8.shr_u(values, 8));
  const words = i32x4.dot_i16x8_s(pairs, i32x4.splat(0x00011000));
  return i8x16.swizzle(words, COMPACT);
}

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
  for (; s < simdEnd; s += 16, d += 12) {
    const text = v128.load(s);
    const hi = i8x16.shr_u(text, 4);
    const lo = v128.and(text, i8x16.splat(0x0f));
    bad = v128.or(bad, invalidLanes(hi, lo));
    const out = pack(sextets(text, hi, lo));
    if (s + 16 < simdEnd) {
      v128.store(d, out);
    } else {
      // The last block: exactly its 12 bytes.
      v128.store64_lane(d, out, 0);
      v128.store32_lane(d, out, 2, 8);
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
