// Step 4 (bodies the vector reader declines, and every other body): strict UTF-8, then JSON.parse.
import { isAscii } from 'node:buffer';
import { apiError } from '../../errors.js';

const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false });

/** The body as JSON ({} when empty); invalid UTF-8 is refused, not turned into U+FFFD and stored. */
export function parseJson(bytes: Buffer): unknown {
  if (bytes.length === 0) return {};
  let text: string;
  try {
    // Pure ASCII reads the same in UTF-8 and latin1, and latin1 is the cheaper copy.
    text = isAscii(bytes) ? bytes.toString('latin1') : utf8.decode(bytes);
  } catch {
    throw apiError('INVALID_JSON', 'the request body is not valid UTF-8');
  }
  try {
    // JSON.parse makes "__proto__" an own data property, so metadata may use
    // any key; nothing downstream merges objects with Object.assign or for...in.
    return JSON.parse(text);
  } catch (err) {
    throw apiError('INVALID_JSON', `the request body is not valid JSON: ${(err as Error).message}`);
  }
}
