// The vector checks as one typed loop, outside valibot: the schema
// (vector.ts) runs them on valid-looking input and falls back to its
// declared pipes, which report every issue with its path; the body reader
// (src/http/body/vector-reader.ts) runs the same bounds as it reads.
import { SPEC_LIMITS } from '../config.js';
import { base64Length, decodeFloat32Base64 } from './base64-float32.js';

const MAX_ABS = SPEC_LIMITS.maxAbsComponent;
const MAX_DIMS = SPEC_LIMITS.maxDimensions;

/** All components finite and within bounds, 1 to maxDimensions of them. */
export function validComponents(values: ArrayLike<unknown>): boolean {
  if (values.length < 1 || values.length > MAX_DIMS) return false;
  for (let i = 0; i < values.length; i++) {
    const x = values[i];
    if (typeof x !== 'number' || !(x >= -MAX_ABS && x <= MAX_ABS)) return false;
  }
  return true;
}

/** A JSON number array the vector schema accepts. */
export function isValidNumberVector(value: unknown): value is number[] {
  return Array.isArray(value) && validComponents(value);
}

/** The floats of a base64 vector the schema accepts, else null. */
export function decodeValidBase64(text: string): Float32Array | null {
  const values = text.length <= base64Length(MAX_DIMS) ? decodeFloat32Base64(text) : null;
  return values && validComponents(values) ? values : null;
}
