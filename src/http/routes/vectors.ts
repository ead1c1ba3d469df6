// /vectors/*: add, read, change metadata, delete. Changes go through store.writes.
import type { Context } from 'koa';
import type * as v from 'valibot';
import type { RequestSchemas } from '../../schemas/index.js';
import { pointer } from '../../errors.js';
import { ttlFields } from '../../index/row-expiry.js';
import type { StoredVector, UpsertOptions, UpsertResult, VectorInput } from '../../index/types.js';
import { REQUEST_SLICE_MS, Slices } from '../../limits/slices.js';
import type { Session } from '../../sessions/session.js';
import { patchedMetadata } from '../../schemas/patched-metadata.js';
import { vectorNotFound } from '../../sessions/session-writes.js';
import { embedRecordsAhead } from '../../sessions/embed-ahead.js';
import { prepareMetadataAhead } from '../../sessions/metadata-ahead.js';
import { analyzerChanged, STALE_TEXTS, withTextsAhead } from '../../sessions/texts-ahead.js';
import { parseAddManyBody, parseBody } from '../body/index.js';
import { assertAnswerSize, ENVELOPE_BYTES, vectorBytes } from '../answer-size.js';
import { replyWithSession, stateOf, type RouteDeps } from '../context.js';
import { noBody } from '../body/no-body.js';
import type { Timings } from '../timings.js';

/** Embed the texts of records without a vector (embedMs), check (capacityCheckMs), then write (addMs / addManyMs), in the session's turn; the MCP remember tool's write too. */
export async function upsert(ctx: Context, deps: RouteDeps, given: VectorInput[], asked: UpsertOptions, metric: string) {
  const { session, timings } = stateOf(ctx);
  const { writes } = deps.store;
  // Embedded before the turn, on the embedding threads (embed-ahead.ts).
  const { records, options: embedded } = given.some((record) => record.vector === undefined)
    ? await timings.measureAsync('embedMs', () => embedRecordsAhead(deps.embedder, session, given, asked))
    : { records: given, options: asked };
  // Texts are analysed in slices before the turn (again if the analyzer changed by then), and a large batch's
  // log record encoded (DATA_DIR), so the turn only writes them.
  // Metadata measured in slices before the turn too (its JSON text, the filter-index entries it lists).
  const preparedMetadata = await prepareMetadataAhead(session, records);
  return withTextsAhead(session, records, embedded, async (preparedTexts) => {
    // writtenAt: each record's ttlMs runs from here, the same for the log record encoded ahead and the turn's plan.
    const options = {
      ...embedded,
      ...(preparedTexts ? { preparedTexts } : {}),
      ...(preparedMetadata ? { preparedMetadata } : {}),
      writtenAt: deps.store.now(),
    };
    const encoded = await deps.store.encodeUpsert(session, records, options);
    return writes.inLoopTurn<UpsertResult | typeof STALE_TEXTS>(session, () => {
      if (analyzerChanged(session.index, options)) return STALE_TEXTS;
      const plan = timings.measure('capacityCheckMs', () => writes.prepareUpsert(session, records, options));
      return timings.measure(metric, () => writes.upsert(session, plan, encoded));
    });
  });
}

/** A stored vector as get and get-many answer it: with its text (null for none) only when asked; its ttl and expiry if it has one. */
function readOut({ text, ttlMs, expiresAt, ...stored }: StoredVector, includeText: boolean) {
  return { ...stored, ...(includeText ? { text: text ?? null } : {}), ...ttlFields({ ttlMs, expiresAt }) };
}

/** get-many's answer: sized before any vector is read out (ANSWER_TOO_LARGE), then read, the event loop given back every few ms. */
async function readMany(deps: RouteDeps, session: Session, ids: string[], includeText: boolean, timings: Timings) {
  const { index } = session;
  const slices = new Slices(REQUEST_SLICE_MS, { owner: session.tokenHash });
  const dims = index.getConfig().dimensions ?? 0;
  let answerBytes = ENVELOPE_BYTES;
  for (const id of ids) {
    await slices.pause();
    answerBytes += index.has(id) ? vectorBytes(id, dims, index.metadataJsonBytes(id) + (includeText ? index.textJsonBytes(id) : 0)) : vectorBytes(id, 0, 0);
  }
  assertAnswerSize(deps.config, answerBytes, 'ask for fewer ids at a time');
  const started = performance.now();
  const vectors = [];
  const notFound: string[] = [];
  for (const id of ids) {
    await slices.pause();
    const vector = index.get(id);
    if (vector) vectors.push(readOut(vector, includeText));
    else notFound.push(id);
  }
  timings.set('getManyMs', Math.round((performance.now() - started) * 1000) / 1000);
  return { vectors, notFound, answerBytes };
}

/** delete-many's work on its checked body (by ids or by filter, in the session's turn): the route's and the MCP forget tool's. */
export function deleteMany(ctx: Context, { store: { writes } }: RouteDeps, { ids, filter }: v.InferOutput<RequestSchemas['DeleteManyRequestSchema']>) {
  const { session, timings } = stateOf(ctx);
  return writes.inLoopTurn(session, () =>
    timings.measure('deleteManyMs', () => (filter ? writes.deleteMatching(session, filter) : writes.delete(session, ids!))),
  );
}

export function vectorRoutes(deps: RouteDeps): void {
  const { router, store, schemas, auth, json, vectorJson } = deps;
  const { writes } = store;

  router.post('/vectors/has', auth, json, async (ctx) => {
    const { id } = parseBody(ctx, schemas.HasRequestSchema);
    const { session, timings } = stateOf(ctx);
    await session.settled(); // an add applied in slices: all of it or none
    const has = timings.measure('hasMs', () => session.index.has(id));
    replyWithSession(ctx, store, { id, has });
  });

  router.post('/vectors/get', auth, json, async (ctx) => {
    const { id, includeText } = parseBody(ctx, schemas.GetRequestSchema);
    const { session, timings } = stateOf(ctx);
    await session.settled();
    const vector = timings.measure('getMs', () => session.index.get(id));
    if (!vector) throw vectorNotFound(id);
    replyWithSession(ctx, store, { vector: readOut(vector, includeText) });
  });

  router.post('/vectors/get-many', auth, json, async (ctx) => {
    const { ids, includeText } = parseBody(ctx, schemas.GetManyRequestSchema);
    const { session, timings } = stateOf(ctx);
    // In the session's turn (after any add applied in slices), so no write lands between the sizing and the reading, both in slices.
    const { vectors, notFound, answerBytes } = await session.gate.search(() => readMany(deps, session, [...new Set(ids)], includeText, timings));
    replyWithSession(ctx, store, { vectors, notFound }, answerBytes);
  });

  router.post('/vectors/metadata/get', auth, json, async (ctx) => {
    const { id } = parseBody(ctx, schemas.GetMetadataRequestSchema);
    const { session, timings } = stateOf(ctx);
    await session.settled();
    const metadata = timings.measure('getMetadataMs', () => session.index.getMetadata(id));
    if (!metadata) throw vectorNotFound(id);
    replyWithSession(ctx, store, { id, metadata });
  });

  router.post('/vectors/metadata/set', auth, json, async (ctx) => {
    const { id, metadata } = parseBody(ctx, schemas.SetMetadataRequestSchema);
    const { session, timings } = stateOf(ctx);
    await writes.inLoopTurn(session, () => timings.measure('setMetadataMs', () => writes.setMetadata(session, id, metadata)));
    replyWithSession(ctx, store, { id, metadata, mutation: { updated: 1 } });
  });

  router.post('/vectors/metadata/patch', auth, json, async (ctx) => {
    const { id, patch } = parseBody(ctx, schemas.PatchMetadataRequestSchema);
    const { session, timings } = stateOf(ctx);
    const metadata = await writes.inLoopTurn(session, () =>
      timings.measure('patchMetadataMs', () => writes.patchMetadata(session, id, (current) => patchedMetadata(schemas, current, patch))),
    );
    replyWithSession(ctx, store, { id, metadata, mutation: { updated: 1 } });
  });

  router.post('/vectors/metadata/delete', auth, json, async (ctx) => {
    const { id } = parseBody(ctx, schemas.DeleteMetadataRequestSchema);
    const { session, timings } = stateOf(ctx);
    const metadata = await writes.inLoopTurn(session, () => timings.measure('deleteMetadataMs', () => writes.deleteMetadata(session, id)));
    replyWithSession(ctx, store, { id, metadata, mutation: { updated: 1 } });
  });

  router.post('/vectors/add', auth, vectorJson, async (ctx) => {
    const { id, vector, metadata, text, ttlMs, dimensions, metric, vectorType, analyzer, embedding } = parseBody(ctx, schemas.AddRequestSchema);
    const options: UpsertOptions = { dimensions, metric, vectorType, analyzer, embedding, pathOf: () => '' };
    const mutation = await upsert(ctx, deps, [{ id, vector, metadata, text, ttlMs }], options, 'addMs');
    replyWithSession(ctx, store, { id, mutation });
  });

  router.post('/vectors/add-many', auth, vectorJson, async (ctx) => {
    const { vectors, dimensions, metric, vectorType, analyzer, embedding } = await parseAddManyBody(ctx, schemas);
    const options: UpsertOptions = { dimensions, metric, vectorType, analyzer, embedding, pathOf: (i: number) => pointer('vectors', i) };
    const mutation = await upsert(ctx, deps, vectors, options, 'addManyMs');
    replyWithSession(ctx, store, { mutation });
  });

  router.post('/vectors/touch', auth, json, async (ctx) => {
    const { ids } = parseBody(ctx, schemas.TouchRequestSchema);
    const { session, timings } = stateOf(ctx);
    const mutation = await writes.inLoopTurn(session, () => timings.measure('touchMs', () => writes.touch(session, ids)));
    replyWithSession(ctx, store, { mutation });
  });

  router.post('/vectors/delete', auth, json, async (ctx) => {
    const { id } = parseBody(ctx, schemas.DeleteRequestSchema);
    const { session, timings } = stateOf(ctx);
    const mutation = await writes.inLoopTurn(session, () => timings.measure('deleteMs', () => writes.delete(session, [id])));
    replyWithSession(ctx, store, { id, mutation });
  });

  router.post('/vectors/delete-many', auth, json, async (ctx) => {
    const mutation = await deleteMany(ctx, deps, parseBody(ctx, schemas.DeleteManyRequestSchema));
    replyWithSession(ctx, store, { mutation });
  });

  router.post('/vectors/clear', auth, noBody, async (ctx) => {
    const { session, timings } = stateOf(ctx);
    const deleted = await writes.inLoopTurn(session, () => timings.measure('clearMs', () => writes.clear(session)));
    replyWithSession(ctx, store, { mutation: { deleted } });
  });
}
