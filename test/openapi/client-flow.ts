// A client written the way a user of openapi-typescript + openapi-fetch
// writes one, against the types generated from the served /openapi.json
// (test-output/openapi-client/schema.d.ts, made by generated-client.test.ts,
// which type-checks this file under --strict and runs it). No casts, no any.
import createClient from 'openapi-fetch';
import type { paths } from '../../test-output/openapi-client/schema.js';

export async function clientFlow(baseUrl: string) {
  const client = createClient<paths>({ baseUrl });
  const issued = await client.POST('/token');
  if (!issued.data) throw new Error('no token');
  const auth = { headers: { authorization: `Bearer ${issued.data.token}` } };

  const added = await client.POST('/vectors/add-many', {
    ...auth,
    body: {
      metric: 'cosine',
      vectors: [
        { id: 'kind-of-blue', vector: [1, 0, 0], metadata: { genre: 'jazz', year: 1959, tags: ['modal', 'cool'] } },
        { id: 'a-love-supreme', vector: [0.9, 0.2, 0], metadata: { genre: 'jazz', year: 1965, label: { name: 'Impulse!' } } },
        { id: 'abbey-road', vector: [0, 1, 0], metadata: { genre: 'rock', year: 1969 } },
      ],
    },
  });
  await client.POST('/vectors/metadata/set', { ...auth, body: { id: 'abbey-road', metadata: { genre: 'rock', year: 1969, remastered: true } } });

  const found = await client.POST('/search', {
    ...auth,
    body: { queryVector: [1, 0.1, 0], topK: 3, includeMetadata: true, filter: { genre: 'jazz', year: { $gte: 1950, $lt: 1970 } } },
  });
  const hits = (found.data?.results ?? []).map((hit) => ({ id: hit.id, score: hit.score, year: hit.metadata?.year }));

  const refused = await client.POST('/search', { ...auth, body: { queryVector: [1, 0] } });
  const code = refused.error?.error.code;
  // @ts-expect-error a misspelled error code does not compile: code is the union of the route's codes
  const misspelled: typeof code = 'DIMENSION_MISSMATCH';

  const session = await client.GET('/session', auth);
  const limits = await client.GET('/limits');
  const cleared = await client.POST('/vectors/clear', auth);
  return {
    added: added.data?.mutation,
    hits,
    code,
    misspelled,
    rateLimit: found.response.headers.get('RateLimit'),
    metric: session.data?.session.config.metric,
    maxTopK: limits.data?.limits.topK.max,
    cleared: cleared.data?.mutation.deleted,
  };
}
