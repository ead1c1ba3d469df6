// /vectors/*: add, read, change metadata, delete.
import type { Context } from 'koa';
import { apiError, pointer } from '../../errors.js';
import type { Metadata, UpsertOptions, VectorInput } from '../../index/vector-index.js';
import { parseBody } from '../body.js';
import { replyWithSession, stateOf, type RouteDeps } from '../context.js';

function notFound(id: string) {
  return apiError('VECTOR_NOT_FOUND', `no vector with id "${id}"`, { path: '/id', id });
}

/** Mark the session changed (updatedAt) and answer with it. */
function replyChanged(ctx: Context, deps: RouteDeps, fields: Record<string, unknown>) {
  stateOf(ctx).session.markUpdated(deps.store.now());
  replyWithSession(ctx, deps.store, fields);
}

/** Validate and check capacity and the memory budget (capacityCheckMs), then write (addMs / addManyMs). */
function upsert(ctx: Context, deps: RouteDeps, records: VectorInput[], options: UpsertOptions, metric: string) {
  const { session, timings } = stateOf(ctx);
  const plan = timings.measure('capacityCheckMs', () => {
    const prepared = session.index.prepareUpsert(records, options);
    deps.store.assertMemoryBudget(session, session.index.memoryBytesAfter(prepared));
    return prepared;
  });
  return timings.measure(metric, () => {
    deps.store.journal(session, (journal, at) => journal.upsert(session, plan, at));
    return session.index.applyUpsert(plan);
  });
}

export function vectorRoutes(deps: RouteDeps): void {
  const { router, store, schemas, auth, json, jsonVectors } = deps;

  router.post('/vectors/has', auth, json, (ctx) => {
    const { id } = parseBody(ctx, schemas.HasRequestSchema);
    const { session, timings } = stateOf(ctx);
    const has = timings.measure('hasMs', () => session.index.has(id));
    replyWithSession(ctx, store, { id, has });
  });

  router.post('/vectors/get', auth, json, (ctx) => {
    const { id } = parseBody(ctx, schemas.GetRequestSchema);
    const { session, timings } = stateOf(ctx);
    const vector = timings.measure('getMs', () => session.index.get(id));
    if (!vector) throw notFound(id);
    replyWithSession(ctx, store, { vector });
  });

  router.post('/vectors/get-many', auth, json, (ctx) => {
    const { ids } = parseBody(ctx, schemas.GetManyRequestSchema);
    const { session, timings } = stateOf(ctx);
    const { vectors, notFound } = timings.measure('getManyMs', () => {
      const found = [];
      const missing: string[] = [];
      for (const id of new Set(ids)) {
        const vector = session.index.get(id);
        if (vector) found.push(vector);
        else missing.push(id);
      }
      return { vectors: found, notFound: missing };
    });
    replyWithSession(ctx, store, { vectors, notFound });
  });

  router.post('/vectors/metadata/get', auth, json, (ctx) => {
    const { id } = parseBody(ctx, schemas.GetMetadataRequestSchema);
    const { session, timings } = stateOf(ctx);
    const metadata = timings.measure('getMetadataMs', () => session.index.getMetadata(id));
    if (!metadata) throw notFound(id);
    replyWithSession(ctx, store, { id, metadata });
  });

  router.post('/vectors/metadata/set', auth, json, (ctx) => {
    const { id, metadata } = parseBody(ctx, schemas.SetMetadataRequestSchema);
    const { session, timings } = stateOf(ctx);
    if (!session.index.has(id)) throw notFound(id);
    timings.measure('setMetadataMs', () => {
      store.journal(session, (journal, at) => journal.metadata(session, id, metadata, at));
      session.index.setMetadata(id, metadata);
    });
    replyChanged(ctx, deps, { id, metadata, mutation: { updated: 1 } });
  });

  router.post('/vectors/metadata/delete', auth, json, (ctx) => {
    const { id } = parseBody(ctx, schemas.DeleteMetadataRequestSchema);
    const { session, timings } = stateOf(ctx);
    const empty: Metadata = {};
    if (!session.index.has(id)) throw notFound(id);
    timings.measure('deleteMetadataMs', () => {
      store.journal(session, (journal, at) => journal.metadata(session, id, empty, at));
      session.index.setMetadata(id, empty);
    });
    replyChanged(ctx, deps, { id, metadata: empty, mutation: { updated: 1 } });
  });

  router.post('/vectors/add', auth, jsonVectors, (ctx) => {
    const { id, vector, metadata, dimensions, metric, vectorType } = parseBody(ctx, schemas.AddRequestSchema);
    const mutation = upsert(ctx, deps, [{ id, vector, metadata }], { dimensions, metric, vectorType, pathOf: () => '' }, 'addMs');
    replyChanged(ctx, deps, { id, mutation });
  });

  router.post('/vectors/add-many', auth, jsonVectors, (ctx) => {
    const { vectors, dimensions, metric, vectorType } = parseBody(ctx, schemas.AddManyRequestSchema);
    const mutation = upsert(ctx, deps, vectors, { dimensions, metric, vectorType, pathOf: (i) => pointer('vectors', i) }, 'addManyMs');
    replyChanged(ctx, deps, { mutation });
  });

  router.post('/vectors/delete', auth, json, (ctx) => {
    const { id } = parseBody(ctx, schemas.DeleteRequestSchema);
    const { session, timings } = stateOf(ctx);
    const mutation = timings.measure('deleteMs', () => {
      if (session.index.has(id)) store.journal(session, (journal, at) => journal.delete(session, [id], at));
      return session.index.delete([id]);
    });
    replyChanged(ctx, deps, { id, mutation });
  });

  router.post('/vectors/delete-many', auth, json, (ctx) => {
    const { ids } = parseBody(ctx, schemas.DeleteManyRequestSchema);
    const { session, timings } = stateOf(ctx);
    const mutation = timings.measure('deleteManyMs', () => {
      if (ids.some((id) => session.index.has(id))) store.journal(session, (journal, at) => journal.delete(session, ids, at));
      return session.index.delete(ids);
    });
    replyChanged(ctx, deps, { mutation });
  });

  router.post('/vectors/clear', auth, (ctx) => {
    const { session, timings } = stateOf(ctx);
    const deleted = timings.measure('clearMs', () => {
      store.journal(session, (journal, at) => journal.clear(session, at));
      return session.index.clear();
    });
    replyChanged(ctx, deps, { mutation: { deleted } });
  });
}
