// The number parser of the vector body reader: one JSON number of a vector,
// read from a scanner's bytes straight to the float32 that JSON.parse and
// then a Float32Array would make, without a string or any other allocation.
import { DECLINE, type JsonScanner, latin1 } from './json-scanner.js';

const MINUS = 0x2d;
const PLUS = 0x2b;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

/** 10^0 .. 10^22: exactly representable doubles. */
const POW10 = Array.from({ length: 23 }, (_, i) => Number(`1e${i}`));
/** Relative error bound of the fast decimal conversion (at most ~7e-16, see toFloat32), with a wide margin. */
const EPSILON = 1e-13;

/** The number at the scanner's position as float32, within ±maxAbs (else DECLINE); the scanner moves past it. */
export function readFloat32(scanner: JsonScanner, maxAbs: number): number {
  scanner.skipSpace();
  const { bytes } = scanner;
  const start = scanner.pos;
  let i = start;
  const negative = bytes[i] === MINUS;
  if (negative) i++;
  let mantissa = 0;
  let digits = 0;
  let c = bytes[i];
  if (c === ZERO) {
    c = bytes[++i];
  } else if (c > ZERO && c <= NINE) {
    while (c >= ZERO && c <= NINE) {
      mantissa = mantissa * 10 + (c - ZERO);
      digits++;
      c = bytes[++i];
    }
  } else {
    throw DECLINE;
  }
  let exponent = 0;
  if (c === DOT) {
    c = bytes[++i];
    if (!(c >= ZERO && c <= NINE)) throw DECLINE;
    while (c >= ZERO && c <= NINE) {
      // Leading zeros of a fraction are not significant digits.
      if (digits > 0 || c !== ZERO) digits++;
      mantissa = mantissa * 10 + (c - ZERO);
      exponent--;
      c = bytes[++i];
    }
  }
  if (c === 0x65 || c === 0x45) {
    c = bytes[++i];
    const expNegative = c === MINUS;
    if (c === MINUS || c === PLUS) c = bytes[++i];
    if (!(c >= ZERO && c <= NINE)) throw DECLINE;
    let e = 0;
    while (c >= ZERO && c <= NINE) {
      e = Math.min(e * 10 + (c - ZERO), 100_000);
      c = bytes[++i];
    }
    exponent += expNegative ? -e : e;
  }
  scanner.pos = i;
  const value = toFloat32(negative, mantissa, digits, exponent, maxAbs) ?? exactFloat32(bytes, start, i, maxAbs);
  if (value === null) throw DECLINE;
  return value;
}

/**
 * Clinger's fast path, widened to float32: with at most 19 significant
 * digits the mantissa carries at most 4 roundings and the power of ten
 * (exact up to 1e22) one more, so the result is within 7e-16 of the decimal.
 * When float32 rounding of everything within EPSILON of it agrees, that is
 * the float32 of the correctly rounded double too (rounding is monotonic).
 * Otherwise (or near the range limit) null: the caller converts exactly.
 */
function toFloat32(negative: boolean, mantissa: number, digits: number, exponent: number, maxAbs: number): number | null {
  if (digits > 19 || exponent > 22 || exponent < -22) return null;
  const magnitude = exponent >= 0 ? mantissa * POW10[exponent] : mantissa / POW10[-exponent];
  const f = Math.fround(magnitude);
  if (Math.fround(magnitude * (1 - EPSILON)) !== f || Math.fround(magnitude * (1 + EPSILON)) !== f) return null;
  if (magnitude * (1 + EPSILON) > maxAbs) return null;
  return negative ? -f : f;
}

/** The exact conversion (JSON.parse's own), for the rare number the fast path cannot settle; null when out of range. */
function exactFloat32(bytes: Buffer, start: number, end: number, maxAbs: number): number | null {
  const value = Number(latin1(bytes, start, end));
  if (!(value >= -maxAbs && value <= maxAbs)) return null;
  return Math.fround(value);
}
