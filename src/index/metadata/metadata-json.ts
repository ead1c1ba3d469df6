// A stored value as it leaves the index: a view of its record's JSON bytes
// in an arena (a vector's metadata, an object; its text, a string literal).
// Records are never written over (chunks are only appended to, and a
// compacted or cleared chunk is let go, not reused), so the view stays what
// it was when the answer was made, however the index changes before the
// answer is written; an answer holds no copy of it. The server's answers
// write the text as it is (no parse, no stringify: answer-stream.ts);
// LocalIndex and any other reader parse it.

import type { Metadata } from '../filter.js';

const utf8 = new TextDecoder();

export class JsonBytes<T = Metadata> {
  /** `bytes`: UTF-8 JSON, not to be written to. */
  constructor(readonly bytes: Uint8Array) {}

  /** The JSON text (a new string each call: answers make it one piece at a time). */
  get json(): string {
    return utf8.decode(this.bytes);
  }

  /** The value (a new object each call). */
  value(): T {
    return JSON.parse(this.json) as T;
  }

  /** JSON.stringify of an answer that holds it writes the value, not this wrapper. */
  toJSON(): T {
    return this.value();
  }
}

/** Metadata's view (issue 24's name; a JsonBytes of any kind is an instance of it). */
export { JsonBytes as MetadataJson };

/** A vector's text as a JSON string literal. */
export type TextJson = JsonBytes<string>;
