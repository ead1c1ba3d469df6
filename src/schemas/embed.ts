// Request body of POST /embed: texts in, vectors out.
import * as v from 'valibot';
import type { Config } from '../config.js';
import { utf8Length } from '../index/json-size.js';
import { utf8StringSchema } from './common.js';
import { VectorEncodingSchema } from './vectors.js';

export function embedSchemas(config: Config) {
  const EmbedTextSchema = v.pipe(
    utf8StringSchema(config.maxEmbedTextBytes, 'a text'),
    v.minLength(1, 'a text must not be empty: it has no token to embed'),
    v.description(`A text to embed; the model reads its first 128 tokens (the rest is truncated). At most ${config.maxEmbedTextBytes} bytes as UTF-8.`),
  );
  return {
    EmbedRequestSchema: v.strictObject({
      texts: v.pipe(
        v.array(EmbedTextSchema),
        v.minLength(1),
        v.maxLength(config.maxEmbedTexts),
        v.check(
          (texts) => texts.reduce((sum, text) => sum + utf8Length(text), 0) <= config.maxEmbedBytes,
          `the texts must be at most ${config.maxEmbedBytes} bytes as UTF-8 together`,
        ),
        v.description(`1 to ${config.maxEmbedTexts} texts, at most ${config.maxEmbedBytes} bytes as UTF-8 together.`),
      ),
      vectorEncoding: v.optional(VectorEncodingSchema, 'numbers'),
    }),
  };
}
