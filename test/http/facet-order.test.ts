// POST /vectors/facet and POST /vectors/list with orderBy over HTTP: answers,
// metrics, and every bad value a 400 with its code and path.
import { expect } from 'chai';
import { SPEC_LIMITS } from '../../src/config.js';
import { expectError, expectOk, useServer } from '../helpers/http.js';
import { sessionWith } from './fixtures.js';

describe('POST /vectors/facet and /vectors/list with orderBy', () => {
  const api = useServer();
  const vectors = Array.from({ length: 30 }, (_, i) => ({
    id: `v${i}`,
    vector: [i + 0.1, 1],
    metadata: { k: i % 4, tags: i % 2 ? ['a', 'b'] : ['a'], at: `2026-01-${String(30 - i).padStart(2, '0')}` },
  }));
  let token: string;

  beforeEach(async () => {
    token = await sessionWith(api, vectors);
  });

  it('counts values, the most counted first, with ranges, under a filter, with facetMs', async () => {
    const body = expectOk(await api.post('/vectors/facet', { token, body: { path: 'tags' } }));
    expect(body.values).to.deep.equal([
      { value: 'a', count: 30 },
      { value: 'b', count: 15 },
    ]);
    expect(body).to.include({ distinctValues: 2, longStrings: 0 });
    expect(body.metrics).to.have.property('facetMs');
    const ranged = expectOk(
      await api.post('/vectors/facet', { token, body: { path: 'k', filter: { tags: 'b' }, limit: 1, ranges: [{ gte: 1, lt: 3 }, { gte: 3 }] } }),
    );
    expect(ranged.values).to.deep.equal([{ value: 1, count: 8 }]);
    expect(ranged.ranges).to.deep.equal([
      { gte: 1, lt: 3, count: 8 },
      { gte: 3, count: 7 },
    ]);
  });

  it('lists by a metadata value, page by page', async () => {
    const seen: string[] = [];
    let cursor: string | undefined;
    for (;;) {
      const page = expectOk(await api.post('/vectors/list', { token, body: { limit: 7, cursor, orderBy: { path: 'at' }, includeMetadata: true } }));
      seen.push(...page.vectors.map((v: { metadata: { at: string } }) => v.metadata.at));
      if (page.nextCursor === null) break;
      cursor = page.nextCursor;
    }
    expect(seen).to.deep.equal(vectors.map((v) => v.metadata.at).sort());
    const desc = expectOk(await api.post('/vectors/list', { token, body: { limit: 3, orderBy: { path: 'k', direction: 'desc' } } }));
    expect(desc.vectors.map((v: { id: string }) => v.id)).to.deep.equal(['v3', 'v7', 'v11']);
  });

  it('pages in order while adds and deletes arrive with each page: every row stored throughout listed once', async () => {
    // More distinct values than one step walks (2,048), so a page pauses between steps with the writes waiting.
    const many = Array.from({ length: 3000 }, (_, i) => ({ id: `m${i}`, vector: [1, i + 1], metadata: { n: (i * 7919) % 3001 } }));
    const big = await sessionWith(api, many.slice(0, 1000));
    for (const from of [1000, 2000]) expectOk(await api.post('/vectors/add-many', { token: big, body: { vectors: many.slice(from, from + 1000) } }));
    const touched = new Set<string>();
    const listed: { id: string; n: number }[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < 200; page++) {
      const add = Array.from({ length: 5 }, (_, j) => ({ id: `x${page}-${j}`, vector: [2, j + 1], metadata: { n: 3001 + page * 5 + j - 500 } }));
      const gone = [`m${(page * 37) % 3000}`];
      for (const id of gone) touched.add(id);
      const [res] = await Promise.all([
        api.post('/vectors/list', { token: big, body: { limit: 61, cursor, orderBy: { path: 'n' }, includeMetadata: true } }),
        api.post('/vectors/add-many', { token: big, body: { vectors: add } }),
        api.post('/vectors/delete-many', { token: big, body: { ids: gone } }),
      ]);
      const body = expectOk(res);
      listed.push(...body.vectors.map((v: { id: string; metadata: { n: number } }) => ({ id: v.id, n: v.metadata.n })));
      if (body.nextCursor === null) break;
      cursor = body.nextCursor;
    }
    const ns = listed.map((v) => v.n);
    expect(ns).to.deep.equal([...ns].sort((a, b) => a - b));
    const seen = new Map<string, number>();
    for (const { id } of listed) seen.set(id, (seen.get(id) ?? 0) + 1);
    for (const { id } of many) if (!touched.has(id)) expect(seen.get(id), id).to.equal(1);
    expect([...seen.values()].every((count) => count === 1)).to.equal(true);
  });

  it('refuses bad values with 400 and the path of each', async () => {
    const facets: [unknown, string][] = [
      [{}, '/path'],
      [{ path: '' }, '/path'],
      [{ path: 7 }, '/path'],
      [{ path: 'x'.repeat(SPEC_LIMITS.maxFieldPathLength + 1) }, '/path'],
      [{ path: 'k', limit: 0 }, '/limit'],
      [{ path: 'k', limit: SPEC_LIMITS.maxFacetLimit + 1 }, '/limit'],
      [{ path: 'k', limit: 1.5 }, '/limit'],
      [{ path: 'k', ranges: [] }, '/ranges'],
      [{ path: 'k', ranges: [{}] }, '/ranges/0'],
      [{ path: 'k', ranges: [{ gte: 2, lt: 2 }] }, '/ranges/0'],
      [{ path: 'k', ranges: [{ gte: '1' }] }, '/ranges/0/gte'],
      [{ path: 'k', ranges: [{ gt: 1 }] }, '/ranges/0/gt'],
      [{ path: 'k', ranges: Array.from({ length: SPEC_LIMITS.maxFacetRanges + 1 }, () => ({ gte: 1 })) }, '/ranges'],
      [{ path: 'k', filter: { k: { $bad: 1 } } }, '/filter/k/$bad'],
      [{ path: 'k', extra: 1 }, '/extra'],
    ];
    for (const [body, path] of facets) {
      const error = expectError(await api.post('/vectors/facet', { token, body }), 400, 'VALIDATION_ERROR');
      const paths = [error.details?.path, ...(error.details?.issues ?? []).map((i: { path: string }) => i.path)];
      expect(paths, JSON.stringify(body)).to.include(path);
    }
    const lists: unknown[] = [
      { orderBy: {} },
      { orderBy: { path: '' } },
      { orderBy: { path: 'k', direction: 'up' } },
      { orderBy: 'k' },
      { orderBy: { path: 'k', x: 1 } },
    ];
    for (const body of lists) expectError(await api.post('/vectors/list', { token, body }), 400, 'VALIDATION_ERROR');
    const plain = expectOk(await api.post('/vectors/list', { token, body: { limit: 2 } })).nextCursor;
    const ordered = expectOk(await api.post('/vectors/list', { token, body: { limit: 2, orderBy: { path: 'k' } } })).nextCursor;
    expectError(await api.post('/vectors/list', { token, body: { orderBy: { path: 'k' }, cursor: plain } }), 400, 'INVALID_CURSOR');
    expectError(await api.post('/vectors/list', { token, body: { cursor: ordered } }), 400, 'INVALID_CURSOR');
    expectError(await api.post('/vectors/list', { token, body: { orderBy: { path: 'k', direction: 'desc' }, cursor: ordered } }), 400, 'INVALID_CURSOR');
    expectError(await api.post('/vectors/list', { token, body: { cursor: 'x'.repeat(SPEC_LIMITS.maxListCursorLength + 1) } }), 400, 'VALIDATION_ERROR');
  });
});
