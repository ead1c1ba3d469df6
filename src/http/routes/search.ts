// POST /search and POST /search-many, through store.searches (on the kernel
// pool when large): by vector, by stored id, by keywords (queryText), or
// hybrid (a text beside either).
import type { Context } from 'koa';
import type * as v from 'valibot';
import type { RequestSchemas } from '../../schemas/index.js';
import { searchCall, searchManyCall, withEmbeddedQueries, type SearchCall } from '../../schemas/search-call.js';
import { embedQueriesAhead } from '../../sessions/embed-ahead.js';
import type { Session } from '../../sessions/session.js';
import type { SessionSearches } from '../../sessions/session-searches.js';
import { parseBody } from '../body/index.js';
import { REQUEST_SLICE_MS, Slices } from '../../limits/slices.js';
import { assertAnswerSize, groupsAsLists, hitsBytes, hitsBytesSliced } from '../answer-size.js';
import { replyWithSession, stateOf, type RouteDeps } from '../context.js';

const SMALLER_SEARCH = 'ask for a lower topK, or without includeMetadata or includeText';
const SMALLER_SEARCH_MANY = 'ask for fewer queries, a lower topK, or without includeMetadata or includeText';

/** The call, in the session's turn (on the kernel pool when large). */
function run(searches: SessionSearches, session: Session, call: SearchCall) {
  return call.ids ? searches.searchByIds(session, call.ids, call.options) : searches.search(session, call.queries, call.options);
}

/** The call with its queries by text embedded (embedMs), before the session's turn. */
async function embedded(ctx: Context, { embedder }: RouteDeps, call: SearchCall): Promise<SearchCall> {
  if (call.ids !== null || !call.textQueries) return call;
  const { session, timings } = stateOf(ctx);
  const texts = call.textQueries.texts;
  const vectors = await timings.measureAsync('embedMs', () => embedQueriesAhead(embedder, session, texts));
  return withEmbeddedQueries(call, vectors);
}

/** POST /search's work on its checked body (embedded, searched, sized): the route's and the MCP recall tool's. */
export async function searchOnce(ctx: Context, deps: RouteDeps, body: v.InferOutput<RequestSchemas['SearchRequestSchema']>) {
  const call = await embedded(ctx, deps, searchCall(body));
  const { session, timings } = stateOf(ctx);
  const { results, groups, stats, metadataJsonBytes, textJsonBytes } = await timings.measureAsync('searchMs', () => run(deps.store.searches, session, call));
  const { lists, extraBytes } = groups ? groupsAsLists(groups) : { lists: results, extraBytes: 0 };
  timings.set('resultCount', groups ? groups[0].length : results[0].length);
  const answerBytes = hitsBytes(lists, metadataJsonBytes + textJsonBytes + extraBytes);
  assertAnswerSize(deps.config, answerBytes, SMALLER_SEARCH);
  // With groupBy: the groups instead of the results.
  return { results: results[0], groups: groups?.[0], stats, answerBytes };
}

export function searchRoutes(deps: RouteDeps): void {
  const { router, config, store, schemas, auth, vectorJson } = deps;
  const { searches } = store;
  router.post('/search', auth, vectorJson, async (ctx) => {
    const { results, groups, stats, answerBytes } = await searchOnce(ctx, deps, parseBody(ctx, schemas.SearchRequestSchema));
    replyWithSession(ctx, store, groups ? { groups, stats } : { results, stats }, answerBytes);
  });

  router.post('/search-many', auth, vectorJson, async (ctx) => {
    const call = await embedded(ctx, deps, searchManyCall(parseBody(ctx, schemas.SearchManyRequestSchema)));
    const { session, timings } = stateOf(ctx);
    const { results, groups, stats, metadataJsonBytes, textJsonBytes } = await timings.measureAsync('searchManyMs', () => run(searches, session, call));
    const { lists, extraBytes } = groups ? groupsAsLists(groups) : { lists: results, extraBytes: 0 };
    timings.set('queryCount', results.length);
    timings.set(
      'resultCount',
      (groups ?? results).reduce((sum, list) => sum + list.length, 0),
    );
    // Up to batch.searchMany x topK hits (x groupBy.size): sized a list at a time.
    const answerBytes = await hitsBytesSliced(
      lists,
      metadataJsonBytes + textJsonBytes + extraBytes,
      new Slices(REQUEST_SLICE_MS, { owner: session.tokenHash }),
    );
    assertAnswerSize(config, answerBytes, SMALLER_SEARCH_MANY);
    replyWithSession(ctx, store, groups ? { groups, stats } : { results, stats }, answerBytes);
  });
}
