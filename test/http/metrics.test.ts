// `metrics` of every route, exactly the fields of the spec's table, and the Server-Timing header.
import { expect } from 'chai';
import { expectOk, useServer, type ApiResponse } from '../helpers/http.js';
import { sessionWith } from './fixtures.js';

/** Spec section 4, "Route-specific metric fields in addition to requestLatencyMs". */
const ROUTES: [method: string, path: string, body: unknown, fields: string[]][] = [
  ['GET', '/session', undefined, ['dbOpenMs', 'statsReadMs']],
  ['POST', '/vectors/has', { id: 'a' }, ['dbOpenMs', 'hasMs']],
  ['POST', '/vectors/get', { id: 'a' }, ['dbOpenMs', 'getMs']],
  ['POST', '/vectors/get-many', { ids: ['a', 'b'] }, ['dbOpenMs', 'getManyMs']],
  ['POST', '/vectors/metadata/get', { id: 'a' }, ['dbOpenMs', 'getMetadataMs']],
  ['POST', '/vectors/metadata/set', { id: 'a', metadata: { k: 1 } }, ['dbOpenMs', 'setMetadataMs']],
  ['POST', '/vectors/metadata/delete', { id: 'a' }, ['dbOpenMs', 'deleteMetadataMs']],
  ['POST', '/vectors/add', { id: 'c', vector: [1, 1] }, ['dbOpenMs', 'capacityCheckMs', 'addMs']],
  ['POST', '/vectors/add-many', { vectors: [{ id: 'd', vector: [1, 2] }] }, ['dbOpenMs', 'capacityCheckMs', 'addManyMs']],
  ['POST', '/search', { queryVector: [1, 0] }, ['dbOpenMs', 'searchMs', 'resultCount']],
  [
    'POST',
    '/search-many',
    {
      queryVectors: [
        [1, 0],
        [0, 1],
      ],
    },
    ['dbOpenMs', 'searchManyMs', 'queryCount', 'resultCount'],
  ],
  ['POST', '/vectors/delete', { id: 'c' }, ['dbOpenMs', 'deleteMs']],
  ['POST', '/vectors/delete-many', { ids: ['d', 'x'] }, ['dbOpenMs', 'deleteManyMs']],
  ['POST', '/vectors/clear', undefined, ['dbOpenMs', 'clearMs']],
  ['POST', '/index/reset', undefined, ['resetMs']],
];

/** The Server-Timing header as { name: dur }. */
function serverTiming(res: ApiResponse): Record<string, number> {
  const header = res.headers.get('server-timing');
  expect(header, 'Server-Timing header').to.be.a('string');
  return Object.fromEntries(
    header!.split(/,\s*/).map((entry) => {
      const match = /^([A-Za-z]+);dur=([0-9.]+)$/.exec(entry);
      expect(match, `Server-Timing entry "${entry}"`).to.not.equal(null);
      return [match![1], Number(match![2])];
    }),
  );
}

/** metrics has exactly requestLatencyMs + `fields`, all non-negative numbers, and Server-Timing carries the *Ms ones. */
function expectMetrics(res: ApiResponse, fields: string[], label: string): Record<string, number> {
  const { metrics } = res.body;
  expect(Object.keys(metrics).sort(), label).to.deep.equal(['requestLatencyMs', ...fields].sort());
  for (const [name, value] of Object.entries(metrics)) expect(value, `${label} ${name}`).to.be.a('number').and.at.least(0);
  const timings = serverTiming(res);
  const expected = Object.fromEntries(
    Object.entries(metrics as Record<string, number>)
      .filter(([n]) => n.endsWith('Ms'))
      .map(([n, v]) => [n.slice(0, -2), v]),
  );
  expect(timings, `${label} Server-Timing`).to.deep.equal(expected);
  expect(metrics.requestLatencyMs, label).to.be.at.least(
    Math.max(
      0,
      ...Object.entries(metrics as Record<string, number>)
        .filter(([n]) => n !== 'requestLatencyMs' && n.endsWith('Ms'))
        .map(([, v]) => v),
    ),
  );
  return metrics;
}

describe('metrics and Server-Timing', () => {
  const api = useServer();

  it('POST /token: requestLatencyMs and tokenIssueMs', async () => {
    expectMetrics(await api.post('/token'), ['tokenIssueMs'], 'POST /token');
  });

  it('GET /limits and GET /: requestLatencyMs only', async () => {
    expectMetrics(await api.get('/limits'), [], 'GET /limits');
    expectMetrics(await api.get('/'), [], 'GET /');
  });

  it('every authenticated route: exactly the fields of the spec table', async () => {
    const token = await sessionWith(api, [
      { id: 'a', vector: [1, 0], metadata: { m: 1 } },
      { id: 'b', vector: [0, 1] },
    ]);
    for (const [method, path, body, fields] of ROUTES) {
      const res = await api.request(method, path, { token, body });
      expectOk(res);
      expectMetrics(res, fields, `${method} ${path}`);
    }
  });

  it('resultCount and queryCount count what was returned', async () => {
    const token = await sessionWith(api, [
      { id: 'a', vector: [1, 0] },
      { id: 'b', vector: [0, 1] },
      { id: 'c', vector: [1, 1] },
    ]);
    const one = expectOk(await api.post('/search', { token, body: { queryVector: [1, 0], topK: 2 } }));
    expect(one.metrics.resultCount).to.equal(2);
    const many = expectOk(
      await api.post('/search-many', {
        token,
        body: {
          queryVectors: [
            [1, 0],
            [0, 1],
            [1, 1],
          ],
          topK: 2,
        },
      }),
    );
    expect(many.metrics).to.include({ queryCount: 3, resultCount: 6 });
    const empty = expectOk(await api.post('/search', { token: await api.token(), body: { queryVector: [1, 0] } }));
    expect(empty.metrics.resultCount).to.equal(0);
  });

  it('error responses carry requestLatencyMs and Server-Timing too', async () => {
    const res = await api.get('/session');
    expect(res.status).to.equal(401);
    expect(res.body.metrics.requestLatencyMs).to.be.a('number');
    expect(serverTiming(res)).to.have.property('requestLatency');
  });
});
