// The key of a filter-index entry, written into one reused buffer: its kind
// (the first byte), then for a value its path's entry id (4 bytes) and the
// value's bytes. Paths and values are looked up and stored in the
// ByteDictionary by these bytes.

import { hasLoneSurrogate, writeUtf8 } from '../json-size.js';
import { hashText64 } from './canonical-json.js';
import { grown, grownLength } from './typed-arrays.js';

/** Entry kinds, the first byte of an entry's key. */
export const PATH = 0x50,
  LONG_STRINGS = 0x4c,
  NUMBER = 0x6e,
  STRING = 0x73,
  TRUE = 0x74,
  FALSE = 0x66,
  NULL = 0x7a,
  /** An array or object at a path, keyed by its canonical text. */
  COMPOSITE = 0x63,
  /** A value too long to be a key (a string or a composite), keyed by a hash of its canonical text. */
  HASHED = 0x68;
/** Where a value's bytes start (after the kind and the path's id). */
export const VALUE_AT = 5;
export const HASH_BYTES = 8;

export class EntryKey {
  /** The key written last (its length is what the write returned). */
  bytes = new Uint8Array(256);
  private readonly number = new Float64Array(1);
  private readonly numberBytes = new Uint8Array(this.number.buffer);

  constructor(readonly maxValueBytes: number) {}

  /** The number the last value() of a number wrote. */
  get numberValue(): number {
    return this.number[0];
  }

  /** How much the buffer can grow by for a row whose longest key is `maxRowKeyBytes`. */
  growthUpper(maxRowKeyBytes: number): number {
    return grownLength(this.bytes.length, Math.max(maxRowKeyBytes, VALUE_AT + 3 * this.maxValueBytes + HASH_BYTES)) - this.bytes.length;
  }

  /** Key of a value at `path`: its length, or -1 for a string longer than maxValueBytes. */
  value(path: number, value: unknown): number {
    if (typeof value === 'string') {
      if (value.length > this.maxValueBytes) return -1; // UTF-8 takes at least a byte per UTF-16 unit
      // A lone surrogate has no UTF-8 form to compare as text: such a string is read from the rows, like a long one.
      if (hasLoneSurrogate(value)) return -1;
      const length = this.text(STRING, VALUE_AT, value);
      this.head(STRING, path);
      return length - VALUE_AT > this.maxValueBytes ? -1 : length;
    }
    if (typeof value === 'number' && Number.isFinite(value)) {
      this.head(NUMBER, path);
      this.number[0] = value === 0 ? 0 : value; // -0 is 0, as JSON and the filters read it
      this.bytes.set(this.numberBytes, VALUE_AT);
      return VALUE_AT + 8;
    }
    this.head(value === true ? TRUE : value === false ? FALSE : NULL, path);
    return VALUE_AT;
  }

  /** Key of an array or object at `path` (`text` its canonical text): its length, or -1 when the text is longer than maxValueBytes. */
  composite(path: number, text: string): number {
    if (text.length > this.maxValueBytes) return -1;
    // Canonical text escapes lone surrogates: it always has a UTF-8 form.
    const length = this.text(COMPOSITE, VALUE_AT, text);
    this.head(COMPOSITE, path);
    return length - VALUE_AT > this.maxValueBytes ? -1 : length;
  }

  /** Key of a long value at `path` by the 64-bit hash of its canonical `text`: its length. */
  hashed(path: number, text: string): number {
    this.bytes = grown(this.bytes, VALUE_AT + HASH_BYTES);
    this.head(HASHED, path);
    const hash = hashText64(text);
    const low = hash[0],
      high = hash[1];
    for (let i = 0; i < 4; i++) {
      this.bytes[VALUE_AT + i] = (low >>> (8 * i)) & 0xff;
      this.bytes[VALUE_AT + 4 + i] = (high >>> (8 * i)) & 0xff;
    }
    return VALUE_AT + HASH_BYTES;
  }

  /** The kind and the path's id: the whole key of a path's long strings (its length). */
  head(kind: number, path: number): number {
    const key = this.bytes;
    key[0] = kind;
    key[1] = path & 0xff;
    key[2] = (path >>> 8) & 0xff;
    key[3] = (path >>> 16) & 0xff;
    key[4] = path >>> 24;
    return VALUE_AT;
  }

  /** `text` as UTF-8 at `at`, after the kind byte; the key's length. */
  text(kind: number, at: number, text: string): number {
    this.bytes = grown(this.bytes, at + 3 * text.length);
    this.bytes[0] = kind;
    return writeUtf8(text, this.bytes, at);
  }
}
