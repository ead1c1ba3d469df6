// POST /search and POST /search-many, through store.searches (on the kernel pool when large).
import { pointer } from '../../errors.js';
import { parseBody } from '../body/index.js';
import { assertAnswerSize, hitsBytes } from '../answer-size.js';
import { replyWithSession, stateOf, type RouteDeps } from '../context.js';

const queryVectorPath = () => pointer('queryVector');
const queryIdPath = () => pointer('queryId');

const SMALLER_SEARCH = 'ask for a lower topK, or without includeMetadata';
const SMALLER_SEARCH_MANY = 'ask for fewer queries, a lower topK, or without includeMetadata';

export function searchRoutes({ router, config, store, schemas, auth, vectorJson }: RouteDeps): void {
  const { searches } = store;
  router.post('/search', auth, vectorJson, async (ctx) => {
    const { queryVector, queryId, ...options } = parseBody(ctx, schemas.SearchRequestSchema);
    const { session, timings } = stateOf(ctx);
    const { results, stats, metadataJsonBytes } = await timings.measureAsync('searchMs', () => (queryId !== undefined
      ? searches.searchByIds(session, [queryId], { ...options, pathOf: queryIdPath })
      : searches.search(session, [queryVector!], { ...options, pathOf: queryVectorPath })));
    timings.set('resultCount', results[0].length);
    const answerBytes = hitsBytes(results, metadataJsonBytes);
    assertAnswerSize(config, answerBytes, SMALLER_SEARCH);
    replyWithSession(ctx, store, { results: results[0], stats }, answerBytes);
  });

  router.post('/search-many', auth, vectorJson, async (ctx) => {
    const { queryVectors, queryIds, ...options } = parseBody(ctx, schemas.SearchManyRequestSchema);
    const { session, timings } = stateOf(ctx);
    const { results, stats, metadataJsonBytes } = await timings.measureAsync('searchManyMs', () => (queryIds !== undefined
      ? searches.searchByIds(session, queryIds, { ...options, pathOf: (j) => pointer('queryIds', j) })
      : searches.search(session, queryVectors!, { ...options, pathOf: (j) => pointer('queryVectors', j) })));
    timings.set('queryCount', results.length);
    timings.set('resultCount', results.reduce((sum, list) => sum + list.length, 0));
    const answerBytes = hitsBytes(results, metadataJsonBytes);
    assertAnswerSize(config, answerBytes, SMALLER_SEARCH_MANY);
    replyWithSession(ctx, store, { results, stats }, answerBytes);
  });
}
