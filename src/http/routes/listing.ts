// POST /vectors/count, /vectors/facet and /vectors/list: what the index holds, optionally filtered.
import type { Context } from 'koa';
import type * as v from 'valibot';
import type { Config } from '../../config.js';
import { ttlFields } from '../../index/row-expiry.js';
import type { RequestSchemas } from '../../schemas/index.js';
import type { ListedVector } from '../../index/types.js';
import type { VectorEncoding } from '../../export/format.js';
import { REQUEST_SLICE_MS, Slices } from '../../limits/slices.js';
import { encodeFloat32Base64 } from '../../schemas/base64-float32.js';
import { parseBody } from '../body/index.js';
import { assertAnswerSize, ENVELOPE_BYTES, vectorBytes } from '../answer-size.js';
import { replyWithSession, stateOf, type RouteDeps } from '../context.js';

/** A listed vector as JSON: its float32 values as numbers (exact) or base64. */
function wireVector({ id, vector, metadata, text, ttlMs, expiresAt }: ListedVector, encoding: VectorEncoding) {
  const out: { id: string; vector?: number[] | string; metadata?: unknown; text?: unknown; ttlMs?: number; expiresAt?: string } = { id };
  if (vector) out.vector = encoding === 'base64' ? encodeFloat32Base64(vector) : Array.from(vector);
  if (metadata) out.metadata = metadata;
  if (text !== undefined) out.text = text;
  return Object.assign(out, ttlFields({ ttlMs, expiresAt }));
}

/** POST /vectors/list's work on its checked body (a page read in a search's turn, sized, made JSON): the route's and the MCP list_memories tool's. */
export async function listPage(ctx: Context, config: Config, { vectorEncoding, ...options }: v.InferOutput<RequestSchemas['ListRequestSchema']>) {
  const { session, timings } = stateOf(ctx);
  const started = performance.now();
  const page = await session.gate.search(async () => {
    await session.index.prepareFilter(options.filter);
    // An orderBy page walks the path's values in 2 ms slices (REQUEST_SLICE_MS).
    return new Slices(REQUEST_SLICE_MS, { owner: session.tokenHash }).run(session.index.listSteps(options));
  });
  // Sized before the vectors are made JSON (base64 takes about a third of the numbers' estimate).
  let answerBytes = ENVELOPE_BYTES;
  for (const { id, vector, metadata, text } of page.vectors) {
    answerBytes += vectorBytes(id, vector?.length ?? 0, (metadata ? session.index.metadataJsonBytes(id) : 0) + (text ? session.index.textJsonBytes(id) : 0));
  }
  assertAnswerSize(config, answerBytes, 'ask for a lower limit, or without includeVectors, includeMetadata or includeText');
  const vectors = page.vectors.map((listed) => wireVector(listed, vectorEncoding));
  timings.set('listMs', Math.round((performance.now() - started) * 1000) / 1000);
  timings.set('resultCount', vectors.length);
  return { vectors, nextCursor: page.nextCursor, answerBytes };
}

export function listingRoutes({ router, config, store, schemas, auth, json }: RouteDeps): void {
  router.post('/vectors/count', auth, json, async (ctx) => {
    const { filter } = parseBody(ctx, schemas.CountRequestSchema);
    const { session, timings } = stateOf(ctx);
    // Rows the filter must read are read in slices first, in a search's turn (no write in between).
    const count = await timings.measureAsync('countMs', () =>
      session.gate.search(async () => {
        await session.index.prepareFilter(filter);
        return session.index.count(filter);
      }),
    );
    replyWithSession(ctx, store, { count });
  });

  router.post('/vectors/facet', auth, json, async (ctx) => {
    const options = parseBody(ctx, schemas.FacetRequestSchema);
    const { session, timings } = stateOf(ctx);
    // The values are walked in slices (REQUEST_SLICE_MS), in a search's turn: no write in between.
    const facet = await timings.measureAsync('facetMs', () =>
      session.gate.search(async () => {
        await session.index.prepareFilter(options.filter);
        return new Slices(REQUEST_SLICE_MS, { owner: session.tokenHash }).run(session.index.facetSteps(options));
      }),
    );
    replyWithSession(ctx, store, { ...facet });
  });

  router.post('/vectors/list', auth, json, async (ctx) => {
    const { vectors, nextCursor, answerBytes } = await listPage(ctx, config, parseBody(ctx, schemas.ListRequestSchema));
    replyWithSession(ctx, store, { vectors, nextCursor }, answerBytes);
  });
}
