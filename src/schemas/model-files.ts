// GET /models/use-lite-512/manifest.json: the model's files for pages
// (src/embedding/model-files.ts has its type, src/http/routes/model-files.ts serves it).
import * as v from 'valibot';
import { MODEL_NAME } from '../embedding/model-files.js';
import { CountSchema } from './envelope.js';

const FileUrlSchema = v.pipe(v.string(), v.description('`<hash>/<file>`, relative to this manifest: served immutable.'));

export const ModelFilesManifestSchema = v.strictObject({
  model: v.literal(MODEL_NAME),
  dimensions: CountSchema,
  maxTokens: v.pipe(CountSchema, v.description('Tokens per text; longer texts are truncated.')),
  bytes: v.pipe(CountSchema, v.description('Total bytes of the files a first use fetches.')),
  files: v.strictObject({
    encoder: FileUrlSchema,
    model: FileUrlSchema,
    shards: v.array(FileUrlSchema),
    vocab: FileUrlSchema,
  }),
});
