// A stored vector's metadata as it leaves the index: its JSON text, copied
// out of the arena. The server's answers write the text as it is (no parse,
// no stringify: answer-stream.ts); LocalIndex and any other reader parse it.

import type { Metadata } from '../filter.js';

export class MetadataJson {
  constructor(readonly json: string) {}

  /** The metadata as an object (a new one each call). */
  value(): Metadata {
    return JSON.parse(this.json) as Metadata;
  }

  /** JSON.stringify of an answer that holds it writes the metadata, not this wrapper. */
  toJSON(): Metadata {
    return this.value();
  }
}

/** `metadata` as an object, whether stored (MetadataJson) or given. */
export const metadataValue = (metadata: Metadata | MetadataJson): Metadata =>
  metadata instanceof MetadataJson ? metadata.value() : metadata;
