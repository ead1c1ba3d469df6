// The tokenizer of the vector body reader (vector-reader.ts): a position in
// a body's bytes, its punctuation, keys and strings, and any other value
// sliced out and handed to JSON.parse whole. It gives up (DECLINE) on
// anything it does not read exactly as JSON.parse would; the reader then
// declines the body.
import { isAscii } from 'node:buffer';

/** Thrown inside the reader to give up; never escapes readVectorBody. */
export const DECLINE = Symbol('decline');

/**
 * Nesting of one value (metadata, a filter) past which the reader declines:
 * JSON.parse of a value a million levels deep takes seconds, and the whole-body
 * path refuses it from a scan of its bytes first (depth.ts). Above any
 * MAX_JSON_DEPTH in use, so an allowed value is never declined for it.
 */
const MAX_VALUE_DEPTH = 64;

export const QUOTE = 0x22;
const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
export const COLON = 0x3a;
export const OPEN_ARRAY = 0x5b;
export const CLOSE_ARRAY = 0x5d;
export const OPEN_OBJECT = 0x7b;
export const CLOSE_OBJECT = 0x7d;

/** Strict UTF-8 of a value's bytes; a BOM is kept (and then refused by JSON.parse), as in a whole body's text. */
const utf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

export class JsonScanner {
  pos = 0;

  constructor(readonly bytes: Buffer) {}

  get done(): boolean {
    return this.pos >= this.bytes.length;
  }

  skipSpace(): void {
    const { bytes } = this;
    let c = bytes[this.pos];
    while (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09) c = bytes[++this.pos];
  }

  peek(): number {
    this.skipSpace();
    return this.bytes[this.pos];
  }

  expect(byte: number): void {
    if (this.peek() !== byte) throw DECLINE;
    this.pos++;
  }

  /** After an item of an array or object: true at its closing `close`, false at a comma (both consumed). */
  atClose(close: number): boolean {
    const next = this.peek();
    this.pos++;
    if (next === close) return true;
    if (next !== COMMA) throw DECLINE;
    return false;
  }

  /** A key at a quote: "id" and "vector" without a new string; "__proto__" declines. */
  key(): string {
    const { bytes, pos } = this;
    if (bytes[pos + 1] === 0x69 && bytes[pos + 2] === 0x64 && bytes[pos + 3] === QUOTE) {
      this.pos = pos + 4;
      return 'id';
    }
    if (
      bytes[pos + 7] === QUOTE &&
      bytes[pos + 1] === 0x76 &&
      bytes[pos + 2] === 0x65 &&
      bytes[pos + 3] === 0x63 &&
      bytes[pos + 4] === 0x74 &&
      bytes[pos + 5] === 0x6f &&
      bytes[pos + 6] === 0x72
    ) {
      this.pos = pos + 8;
      return 'vector';
    }
    const key = this.string();
    // Assigning "__proto__" would set the prototype; JSON.parse makes it a plain key.
    if (key === '__proto__') throw DECLINE;
    return key;
  }

  /** An ASCII string without escapes as is, anything else through jsonValue(). */
  string(): string {
    const { bytes } = this;
    const start = this.pos;
    let i = start + 1;
    for (;;) {
      const c = bytes[i];
      if (c === QUOTE) break;
      // Escapes, control characters and non-ASCII bytes: JSON.parse's slice (which declines non-ASCII).
      if (c === BACKSLASH || c === undefined || c < 0x20 || c >= 0x80) return this.jsonValue() as string;
      i++;
    }
    this.pos = i + 1;
    return latin1(bytes, start + 1, i);
  }

  /** Index of the closing quote of the string at pos, no escape read (the caller checks the text between). */
  rawStringEnd(): number {
    const end = this.bytes.indexOf(QUOTE, this.pos + 1);
    if (end < 0) throw DECLINE;
    return end;
  }

  /** Any JSON value, parsed by JSON.parse from its own bytes (strict UTF-8, as parse-json.ts reads a whole body). */
  jsonValue(): unknown {
    this.skipSpace();
    const start = this.pos;
    this.pos = endOfValue(this.bytes, start);
    const slice = this.bytes.subarray(start, this.pos);
    try {
      // A value starts and ends at ASCII bytes, so its text is the same slice of the whole body's text.
      return JSON.parse(isAscii(slice) ? latin1(this.bytes, start, this.pos) : utf8.decode(slice));
    } catch {
      throw DECLINE;
    }
  }
}

/** Buffer's own latin1 slicer (what toString('latin1') calls after checking its arguments). */
type Latin1Slicer = { latin1Slice(start: number, end: number): string };
const HAS_LATIN1_SLICE = typeof (Buffer.prototype as Partial<Latin1Slicer>).latin1Slice === 'function';

/** bytes [start, end) as a string; the callers pass bounds within the buffer. */
export function latin1(bytes: Buffer, start: number, end: number): string {
  // Called for every id and base64 vector: toString's argument handling costs more than the copy.
  return HAS_LATIN1_SLICE ? (bytes as unknown as Latin1Slicer).latin1Slice(start, end) : bytes.toString('latin1', start, end);
}

/**
 * Index just past the JSON value starting at `start` (strings, nesting and
 * scalars; not a validation: JSON.parse checks the slice).
 */
function endOfValue(bytes: Buffer, start: number): number {
  let depth = 0;
  // Past this the caller's whole-body path scans the nesting before JSON.parse builds it (depth.ts).
  const deepest = MAX_VALUE_DEPTH;
  let i = start;
  for (;;) {
    const c = bytes[i];
    if (c === undefined) throw DECLINE;
    if (c === QUOTE) {
      i++;
      for (;;) {
        const s = bytes[i];
        if (s === undefined) throw DECLINE;
        i++;
        if (s === BACKSLASH) i++;
        else if (s === QUOTE) break;
      }
    } else if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > deepest) throw DECLINE;
      i++;
    } else if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      if (depth === 0) return i;
      depth--;
      i++;
    } else if (depth === 0 && (c === COMMA || c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09)) {
      return i;
    } else {
      i++;
    }
    if (depth === 0 && (c === QUOTE || c === CLOSE_ARRAY || c === CLOSE_OBJECT)) return i;
  }
}
