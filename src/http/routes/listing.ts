// POST /vectors/count and POST /vectors/list: what the index holds, optionally filtered.
import type { ListedVector } from '../../index/vector-index.js';
import type { VectorEncoding } from '../../export/format.js';
import { encodeFloat32Base64 } from '../../schemas/base64-float32.js';
import { parseBody } from '../body/index.js';
import { replyWithSession, stateOf, type RouteDeps } from '../context.js';

/** A listed vector as JSON: its float32 values as numbers (exact) or base64. */
function wireVector({ id, vector, metadata }: ListedVector, encoding: VectorEncoding) {
  const out: { id: string; vector?: number[] | string; metadata?: unknown } = { id };
  if (vector) out.vector = encoding === 'base64' ? encodeFloat32Base64(vector) : Array.from(vector);
  if (metadata) out.metadata = metadata;
  return out;
}

export function listingRoutes({ router, store, schemas, auth, json }: RouteDeps): void {
  router.post('/vectors/count', auth, json, (ctx) => {
    const { filter } = parseBody(ctx, schemas.CountRequestSchema);
    const { session, timings } = stateOf(ctx);
    const count = timings.measure('countMs', () => session.index.count(filter));
    replyWithSession(ctx, store, { count });
  });

  router.post('/vectors/list', auth, json, (ctx) => {
    const { vectorEncoding, ...options } = parseBody(ctx, schemas.ListRequestSchema);
    const { session, timings } = stateOf(ctx);
    const { vectors, nextCursor } = timings.measure('listMs', () => {
      const page = session.index.list(options);
      return { vectors: page.vectors.map((listed) => wireVector(listed, vectorEncoding)), nextCursor: page.nextCursor };
    });
    timings.set('resultCount', vectors.length);
    replyWithSession(ctx, store, { vectors, nextCursor });
  });
}
