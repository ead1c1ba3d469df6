// POST /embed: texts in, the builtin model's vectors out (on the embedding
// threads, src/embedding/embedding-pool.ts), as JSON numbers or base64.
import { encodeFloat32Base64 } from '../../schemas/base64-float32.js';
import { parseBody } from '../body/index.js';
import { reply, stateOf, type RouteDeps } from '../context.js';

export function embedRoutes({ router, schemas, auth, json, embedder }: RouteDeps): void {
  router.post('/embed', auth, json, async (ctx) => {
    const { texts, vectorEncoding } = parseBody(ctx, schemas.EmbedRequestSchema);
    const { session, timings } = stateOf(ctx);
    const vectors = await timings.measureAsync('embedMs', () => embedder.embed(texts, session.tokenHash));
    timings.set('textCount', texts.length);
    reply(ctx, {
      model: embedder.model,
      dimensions: embedder.dimensions,
      vectors: vectors.map((vector) => (vectorEncoding === 'base64' ? encodeFloat32Base64(vector) : Array.from(vector))),
    });
  });
}
