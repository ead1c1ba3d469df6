// Every row of the issue's error table: status, code and (where named) details path.
// No failing request changes the index.
import { expect } from 'chai';
import { ManualClock } from '../helpers/clock.js';
import { expectError, expectOk, useServer } from '../helpers/http.js';
import { sessionWith, snapshot } from './fixtures.js';

const AUTH_ROUTES: [string, string][] = [
  ['GET', '/session'],
  ['POST', '/index/reset'],
  ['POST', '/vectors/has'],
  ['POST', '/vectors/get'],
  ['POST', '/vectors/get-many'],
  ['POST', '/vectors/metadata/get'],
  ['POST', '/vectors/metadata/set'],
  ['POST', '/vectors/metadata/delete'],
  ['POST', '/vectors/add'],
  ['POST', '/vectors/add-many'],
  ['POST', '/vectors/delete'],
  ['POST', '/vectors/delete-many'],
  ['POST', '/vectors/clear'],
  ['POST', '/search'],
  ['POST', '/search-many'],
];

describe('errors: authentication (401)', () => {
  const clock = new ManualClock();
  const api = useServer({ sessionTtlMs: 10_000 }, clock.now);

  it('UNAUTHORIZED without an Authorization header, on every authenticated route', async () => {
    for (const [method, path] of AUTH_ROUTES) {
      const res = await api.request(method, path, { body: method === 'POST' ? { id: 'a' } : undefined });
      expectError(res, 401, 'UNAUTHORIZED');
      expect(res.headers.get('www-authenticate'), path).to.match(/^Bearer/);
    }
  });

  it('UNAUTHORIZED for a malformed Authorization header', async () => {
    const token = await api.token();
    for (const authorization of [`Basic ${token}`, 'Bearer', `Bearer ${token} extra`, token, `Bearer  ${token}`]) {
      expectError(await api.get('/session', { headers: { authorization } }), 401, 'UNAUTHORIZED');
    }
  });

  it('INVALID_TOKEN for an unknown token and for a token of the wrong shape', async () => {
    expectError(await api.get('/session', { token: 'A'.repeat(43) }), 401, 'INVALID_TOKEN');
    expectError(await api.get('/session', { token: 'short' }), 401, 'INVALID_TOKEN');
  });

  it('SESSION_EXPIRED for the token of an expired session', async () => {
    const token = await api.token();
    clock.advance(10_000);
    expectError(await api.get('/session', { token }), 401, 'SESSION_EXPIRED');
    expectError(await api.post('/search', { token, body: { queryVector: [1] } }), 401, 'SESSION_EXPIRED');
  });
});

describe('errors: request bodies', () => {
  const api = useServer({
    maxBodyBytes: 4096,
    maxAddManyBatch: 3,
    maxGetManyBatch: 3,
    maxDeleteManyBatch: 3,
    maxSearchManyBatch: 2,
    maxIdLength: 8,
    maxMetadataBytes: 40,
  });
  let token: string;
  let initial: unknown;
  const IDS = ['a', 'b', 'new'];

  before(async () => {
    token = await sessionWith(api, [
      { id: 'a', vector: [1, 0, 0], metadata: { m: 1 } },
      { id: 'b', vector: [0, 1, 0] },
    ]);
    initial = await snapshot(api, token, IDS);
  });
  afterEach(async () => {
    expect(await snapshot(api, token, IDS), 'the failed request changed the index').to.deep.equal(initial);
  });

  it('INVALID_JSON (400) for a body that is not JSON', async () => {
    expectError(await api.post('/vectors/add', { token, body: '{"id": "x", "vector": [1, 0, 0]' }), 400, 'INVALID_JSON');
    expectError(await api.post('/search', { token, body: 'queryVector=1' }), 400, 'INVALID_JSON');
  });

  it('UNSUPPORTED_MEDIA_TYPE (415) for another content type, or a body without one', async () => {
    const body = JSON.stringify({ id: 'new', vector: [1, 1, 1] });
    expectError(await api.post('/vectors/add', { token, body, headers: { 'content-type': 'text/plain' } }), 415, 'UNSUPPORTED_MEDIA_TYPE');
    expectError(
      await api.post('/vectors/add', { token, body, headers: { 'content-type': 'application/x-www-form-urlencoded' } }),
      415,
      'UNSUPPORTED_MEDIA_TYPE',
    );
    const res = await fetch(`${api.base}/vectors/add`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: new TextEncoder().encode(body) });
    expect(res.status).to.equal(415);
    expect((await res.json()).error.code).to.equal('UNSUPPORTED_MEDIA_TYPE');
  });

  it('accepts application/json with a charset parameter', async () => {
    expectOk(await api.post('/vectors/has', { token, body: JSON.stringify({ id: 'a' }), headers: { 'content-type': 'application/json; charset=utf-8' } }));
  });

  it('PAYLOAD_TOO_LARGE (413) for a body over maxBodyBytes', async () => {
    const vectors = Array.from({ length: 3 }, (_, i) => ({ id: `n${i}`, vector: [1, 1, 1], metadata: { pad: 'x'.repeat(1500) } }));
    expectError(await api.post('/vectors/add-many', { token, body: { vectors } }), 413, 'PAYLOAD_TOO_LARGE');
  });

  it("VALIDATION_ERROR (400) for each schema rule, with each issue's path", async () => {
    const cases: [string, unknown, string][] = [
      ['/vectors/add', { id: 5, vector: [1, 0, 0] }, '/id'],
      ['/vectors/add', { id: '', vector: [1, 0, 0] }, '/id'],
      ['/vectors/add', { id: 'x'.repeat(9), vector: [1, 0, 0] }, '/id'],
      ['/vectors/add', { vector: [1, 0, 0] }, '/id'],
      ['/vectors/add', { id: 'new' }, '/vector'],
      ['/vectors/add', { id: 'new', vector: [] }, '/vector'],
      ['/vectors/add', { id: 'new', vector: 'abc' }, '/vector'],
      ['/vectors/add', { id: 'new', vector: [1, '2', 3] }, '/vector/1'],
      ['/vectors/add', { id: 'new', vector: [1, null, 3] }, '/vector/1'],
      ['/vectors/add', { id: 'new', vector: [1, 0, 1e17] }, '/vector/2'],
      ['/vectors/add', { id: 'new', vector: [1, 1, 1], metadata: [1] }, '/metadata'],
      ['/vectors/add', { id: 'new', vector: [1, 1, 1], metadata: null }, '/metadata'],
      ['/vectors/add', { id: 'new', vector: [1, 1, 1], metadata: 'tag' }, '/metadata'],
      ['/vectors/add', { id: 'new', vector: [1, 1, 1], metadata: { pad: 'x'.repeat(40) } }, '/metadata'],
      ['/vectors/add', { id: 'new', vector: [1, 1, 1], metric: 'dot' }, '/metric'],
      ['/vectors/add', { id: 'new', vector: [1, 1, 1], vectorType: 'float16' }, '/vectorType'],
      ['/vectors/add', { id: 'new', vector: [1, 1, 1], dimensions: 0 }, '/dimensions'],
      ['/vectors/add', { id: 'new', vector: [1, 1, 1], dimensions: 1025 }, '/dimensions'],
      ['/vectors/add', { id: 'new', vector: [1, 1, 1], dimensions: 2.5 }, '/dimensions'],
      ['/vectors/add', { id: 'new', vector: [1, 1, 1], colour: 'red' }, '/colour'],
      ['/vectors/add-many', { vectors: [] }, '/vectors'],
      [
        '/vectors/add-many',
        {
          vectors: [
            { id: 'new', vector: [1, 1, 1] },
            { id: 'n2', vector: [1, true, 1] },
          ],
        },
        '/vectors/1/vector/1',
      ],
      ['/vectors/add-many', { vectors: {} }, '/vectors'],
      ['/vectors/get-many', { ids: [] }, '/ids'],
      ['/vectors/get-many', { ids: ['a', 7] }, '/ids/1'],
      ['/vectors/delete-many', { ids: 'a' }, '/ids'],
      ['/vectors/metadata/set', { id: 'a' }, '/metadata'],
      ['/vectors/has', {}, '/id'],
      ['/vectors/has', '"a"', ''], // JSON, but not an object: the pointer to the whole body
      ['/vectors/has', '[{"id":"a"}]', '/id'],
      ['/search', {}, '/queryVector'],
      ['/search', { queryVector: [1, 0, 0], topK: 0 }, '/topK'],
      ['/search', { queryVector: [1, 0, 0], topK: 101 }, '/topK'],
      ['/search', { queryVector: [1, 0, 0], topK: 1.5 }, '/topK'],
      ['/search', { queryVector: [1, 0, 0], topK: '5' }, '/topK'],
      ['/search', { queryVector: [1, 0, 0], candidatePool: 0 }, '/candidatePool'],
      ['/search', { queryVector: [1, 0, 0], candidatePool: 2049 }, '/candidatePool'],
      ['/search', { queryVector: [1, 0, 0], includeMetadata: 'yes' }, '/includeMetadata'],
      ['/search', { queryVector: [1, 0, 0], filter: ['a'] }, '/filter'],
      ['/search', { queryVector: [1, 0, 0], filter: 'a' }, '/filter'],
      ['/search', { queryVector: [1, 0, 0], filter: null }, '/filter'],
      ['/search-many', { queryVectors: [] }, '/queryVectors'],
      ['/search-many', { queryVectors: [[1, 0, 0], 'x'] }, '/queryVectors/1'],
    ];
    for (const [path, body, pointer] of cases) {
      const err = expectError(await api.post(path, { token, body }), 400, 'VALIDATION_ERROR');
      expect(err.details.issues, `${path} ${JSON.stringify(body)}`).to.be.an('array').that.is.not.empty;
      for (const issue of err.details.issues) expect(issue).to.have.all.keys('path', 'message');
      expect(
        err.details.issues.map((i: { path: string }) => i.path),
        `${path} ${JSON.stringify(body)}`,
      ).to.include(pointer);
    }
  });

  it('VALIDATION_ERROR for non-finite numbers (1e999 parses to Infinity)', async () => {
    const err = expectError(await api.post('/vectors/add', { token, body: '{"id":"new","vector":[1,1e999,0]}' }), 400, 'VALIDATION_ERROR');
    expect(err.details.issues[0].path).to.equal('/vector/1');
    expectError(await api.post('/search', { token, body: '{"queryVector":[-1e999,0,0]}' }), 400, 'VALIDATION_ERROR');
  });

  it('DIMENSION_MISMATCH (400) for a vector of another length, with both lengths', async () => {
    const add = expectError(await api.post('/vectors/add', { token, body: { id: 'new', vector: [1, 1] } }), 400, 'DIMENSION_MISMATCH');
    expect(add.details).to.deep.equal({ path: '/vector', expected: 3, actual: 2 });
    const many = expectError(
      await api.post('/vectors/add-many', {
        token,
        body: {
          vectors: [
            { id: 'new', vector: [1, 1, 1] },
            { id: 'c', vector: [1, 1, 1, 1] },
          ],
        },
      }),
      400,
      'DIMENSION_MISMATCH',
    );
    expect(many.details).to.deep.equal({ path: '/vectors/1/vector', expected: 3, actual: 4 });
    const dims = expectError(await api.post('/vectors/add', { token, body: { id: 'new', vector: [1, 1, 1], dimensions: 4 } }), 400, 'DIMENSION_MISMATCH');
    expect(dims.details).to.deep.include({ path: '/dimensions', expected: 3, actual: 4 });
    const search = expectError(await api.post('/search', { token, body: { queryVector: [1, 1] } }), 400, 'DIMENSION_MISMATCH');
    expect(search.details).to.deep.equal({ path: '/queryVector', expected: 3, actual: 2 });
    const searchMany = expectError(
      await api.post('/search-many', {
        token,
        body: {
          queryVectors: [
            [1, 1, 1],
            [1, 1, 1, 1],
          ],
        },
      }),
      400,
      'DIMENSION_MISMATCH',
    );
    expect(searchMany.details).to.deep.equal({ path: '/queryVectors/1', expected: 3, actual: 4 });
  });

  it("METRIC_LOCKED (409) for another metric than the session's", async () => {
    const err = expectError(await api.post('/vectors/add', { token, body: { id: 'new', vector: [1, 1, 1], metric: 'l2' } }), 409, 'METRIC_LOCKED');
    expect(err.details).to.deep.include({ path: '/metric', expected: 'cosine', actual: 'l2' });
  });

  it("VECTOR_TYPE_LOCKED (409) for another vectorType than the session's", async () => {
    const err = expectError(await api.post('/vectors/add', { token, body: { id: 'new', vector: [1, 1, 1], vectorType: 'int8' } }), 409, 'VECTOR_TYPE_LOCKED');
    expect(err.details).to.deep.equal({ path: '/vectorType', expected: 'float32', actual: 'int8' });
  });

  it('ZERO_VECTOR (400) for a zero vector or query under cosine', async () => {
    expect(expectError(await api.post('/vectors/add', { token, body: { id: 'new', vector: [0, 0, 0] } }), 400, 'ZERO_VECTOR').details).to.deep.equal({
      path: '/vector',
    });
    expect(expectError(await api.post('/vectors/add', { token, body: { id: 'a', vector: [-0, 0, 0] } }), 400, 'ZERO_VECTOR').details).to.deep.equal({
      path: '/vector',
    });
    expect(
      expectError(
        await api.post('/vectors/add-many', {
          token,
          body: {
            vectors: [
              { id: 'new', vector: [1, 0, 0] },
              { id: 'c', vector: [0, 0, 0] },
            ],
          },
        }),
        400,
        'ZERO_VECTOR',
      ).details,
    ).to.deep.equal({ path: '/vectors/1/vector' });
    expect(expectError(await api.post('/search', { token, body: { queryVector: [0, 0, 0] } }), 400, 'ZERO_VECTOR').details).to.deep.equal({
      path: '/queryVector',
    });
    expect(
      expectError(
        await api.post('/search-many', {
          token,
          body: {
            queryVectors: [
              [1, 0, 0],
              [0, 0, 0],
            ],
          },
        }),
        400,
        'ZERO_VECTOR',
      ).details,
    ).to.deep.equal({ path: '/queryVectors/1' });
  });

  it('BATCH_TOO_LARGE (400) for each batch over its cap, with the limit', async () => {
    const cases: [string, unknown, string, number][] = [
      ['/vectors/add-many', { vectors: Array.from({ length: 4 }, (_, i) => ({ id: `n${i}`, vector: [1, 1, 1] })) }, '/vectors', 3],
      ['/vectors/get-many', { ids: ['a', 'b', 'c', 'd'] }, '/ids', 3],
      ['/vectors/delete-many', { ids: ['a', 'b', 'c', 'd'] }, '/ids', 3],
      [
        '/search-many',
        {
          queryVectors: [
            [1, 0, 0],
            [0, 1, 0],
            [0, 0, 1],
          ],
        },
        '/queryVectors',
        2,
      ],
    ];
    for (const [path, body, pointer, limit] of cases) {
      const err = expectError(await api.post(path, { token, body }), 400, 'BATCH_TOO_LARGE');
      expect(err.details, path).to.deep.include({ path: pointer, limit });
    }
    // At the cap is fine.
    expectOk(await api.post('/vectors/get-many', { token, body: { ids: ['a', 'b', 'c'] } }));
  });

  it('VECTOR_NOT_FOUND (404) on get and the metadata routes, with the id', async () => {
    for (const [path, body] of [
      ['/vectors/get', { id: 'new' }],
      ['/vectors/metadata/get', { id: 'new' }],
      ['/vectors/metadata/set', { id: 'new', metadata: { a: 1 } }],
      ['/vectors/metadata/delete', { id: 'new' }],
    ] as const) {
      expect(expectError(await api.post(path, { token, body }), 404, 'VECTOR_NOT_FOUND').details).to.deep.include({ path: '/id', id: 'new' });
    }
  });
});

describe('errors: capacity', () => {
  const api = useServer({ maxVectorsPerSession: 3, maxSessions: 2 });

  it('CAPACITY_EXCEEDED (409) when an add would pass maxVectors; stores nothing', async () => {
    const token = await sessionWith(api, [
      { id: 'a', vector: [1, 0] },
      { id: 'b', vector: [0, 1] },
    ]);
    const before = await snapshot(api, token, ['a', 'b', 'c', 'd']);
    expectError(
      await api.post('/vectors/add-many', {
        token,
        body: {
          vectors: [
            { id: 'c', vector: [1, 1] },
            { id: 'd', vector: [2, 1] },
          ],
        },
      }),
      409,
      'CAPACITY_EXCEEDED',
    );
    expect(await snapshot(api, token, ['a', 'b', 'c', 'd'])).to.deep.equal(before);
  });

  it('SERVER_AT_CAPACITY (503) on POST /token at MAX_SESSIONS, with Retry-After', async () => {
    await api.token();
    const res = await api.post('/token');
    expectError(res, 503, 'SERVER_AT_CAPACITY');
    expect(Number(res.headers.get('retry-after'))).to.be.above(0);
  });
});

describe('errors: routes', () => {
  const api = useServer();

  it('NOT_FOUND (404) for an unknown route', async () => {
    expectError(await api.get('/nope'), 404, 'NOT_FOUND');
    expectError(await api.post('/vectors/upsert', { body: {} }), 404, 'NOT_FOUND');
  });

  it('METHOD_NOT_ALLOWED (405) for a wrong method, with the Allow header', async () => {
    for (const [method, path, allowed] of [
      ['GET', '/search', 'POST'],
      ['DELETE', '/token', 'POST'],
      ['POST', '/limits', 'GET'],
      ['PUT', '/vectors/add', 'POST'],
    ]) {
      const res = await api.request(method, path);
      expectError(res, 405, 'METHOD_NOT_ALLOWED');
      expect(res.headers.get('allow'), `${method} ${path}`).to.include(allowed);
    }
  });
});
