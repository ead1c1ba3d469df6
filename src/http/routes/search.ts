// POST /search and POST /search-many, through store.searches (on the kernel
// pool when large): by vector, by stored id, by keywords (queryText), or
// hybrid (a text beside either).
import { pointer } from '../../errors.js';
import { parseBody } from '../body/index.js';
import { assertAnswerSize, hitsBytes } from '../answer-size.js';
import { replyWithSession, stateOf, type RouteDeps } from '../context.js';

const queryVectorPath = () => pointer('queryVector');
const queryIdPath = () => pointer('queryId');
const queryTextPath = () => pointer('queryText');

const SMALLER_SEARCH = 'ask for a lower topK, or without includeMetadata or includeText';
const SMALLER_SEARCH_MANY = 'ask for fewer queries, a lower topK, or without includeMetadata or includeText';

export function searchRoutes({ router, config, store, schemas, auth, vectorJson }: RouteDeps): void {
  const { searches } = store;
  router.post('/search', auth, vectorJson, async (ctx) => {
    const { queryVector, queryId, queryText, ...options } = parseBody(ctx, schemas.SearchRequestSchema);
    const { session, timings } = stateOf(ctx);
    const texts = queryText === undefined ? {} : { queryTexts: [queryText], textPathOf: queryTextPath };
    const { results, stats, metadataJsonBytes, textJsonBytes } = await timings.measureAsync('searchMs', () => (queryId !== undefined
      ? searches.searchByIds(session, [queryId], { ...options, ...texts, pathOf: queryIdPath })
      : searches.search(session, queryVector === undefined ? null : [queryVector], { ...options, ...texts, pathOf: queryVectorPath })));
    timings.set('resultCount', results[0].length);
    const answerBytes = hitsBytes(results, metadataJsonBytes + textJsonBytes);
    assertAnswerSize(config, answerBytes, SMALLER_SEARCH);
    replyWithSession(ctx, store, { results: results[0], stats }, answerBytes);
  });

  router.post('/search-many', auth, vectorJson, async (ctx) => {
    const { queryVectors, queryIds, queryTexts, ...options } = parseBody(ctx, schemas.SearchManyRequestSchema);
    const { session, timings } = stateOf(ctx);
    const texts = queryTexts === undefined ? {} : { queryTexts, textPathOf: (j: number) => pointer('queryTexts', j) };
    const { results, stats, metadataJsonBytes, textJsonBytes } = await timings.measureAsync('searchManyMs', () => (queryIds !== undefined
      ? searches.searchByIds(session, queryIds, { ...options, ...texts, pathOf: (j) => pointer('queryIds', j) })
      : searches.search(session, queryVectors ?? null, { ...options, ...texts, pathOf: (j) => pointer('queryVectors', j) })));
    timings.set('queryCount', results.length);
    timings.set('resultCount', results.reduce((sum, list) => sum + list.length, 0));
    const answerBytes = hitsBytes(results, metadataJsonBytes + textJsonBytes);
    assertAnswerSize(config, answerBytes, SMALLER_SEARCH_MANY);
    replyWithSession(ctx, store, { results, stats }, answerBytes);
  });
}
