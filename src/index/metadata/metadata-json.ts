// A stored vector's metadata as it leaves the index: a view of its record's
// JSON bytes in the arena. Records are never written over (chunks are only
// appended to, and a compacted or cleared chunk is let go, not reused), so
// the view stays what it was when the answer was made, however the index
// changes before the answer is written; an answer holds no copy of it. The
// server's answers write the text as it is (no parse, no stringify:
// answer-stream.ts); LocalIndex and any other reader parse it.

import type { Metadata } from '../filter.js';

const utf8 = new TextDecoder();

export class MetadataJson {
  /** `bytes`: UTF-8 JSON, not to be written to. */
  constructor(readonly bytes: Uint8Array) {}

  /** The JSON text (a new string each call: answers make it one piece at a time). */
  get json(): string {
    return utf8.decode(this.bytes);
  }

  /** The metadata as an object (a new one each call). */
  value(): Metadata {
    return JSON.parse(this.json) as Metadata;
  }

  /** JSON.stringify of an answer that holds it writes the metadata, not this wrapper. */
  toJSON(): Metadata {
    return this.value();
  }
}

