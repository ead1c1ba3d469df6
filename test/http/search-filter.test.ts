// POST /search and /search-many with filter operators: matching results,
// stats, and 400 VALIDATION_ERROR naming the bad part of a filter.
import { expect } from 'chai';
import { expectError, expectOk, useServer } from '../helpers/http.js';

describe('POST /search filters', () => {
  const api = useServer();
  let token: string;

  before(async () => {
    token = await api.token();
    expectOk(
      await api.post('/vectors/add-many', {
        token,
        body: {
          vectors: [
            { id: 'a', vector: [1, 0], metadata: { shop: { city: 'Oslo' }, price: 10 } },
            { id: 'b', vector: [0.9, 0.1], metadata: { shop: { city: 'Bergen' }, price: 20 } },
            { id: 'c', vector: [0, 1], metadata: { shop: { city: 'Oslo' }, price: 30 } },
          ],
        },
      }),
    );
  });

  it('applies operators and dot paths and reports matched and scanned', async () => {
    const body = expectOk(
      await api.post('/search', {
        token,
        body: { queryVector: [1, 0], filter: { 'shop.city': 'Oslo', price: { $gte: 20 } } },
      }),
    );
    expect(body.results.map((r: { id: string }) => r.id)).to.deep.equal(['c']);
    expect(body.stats).to.include({ exact: true, matched: 1, scanned: 1 });
  });

  it('applies the same filter to every query of /search-many', async () => {
    const body = expectOk(
      await api.post('/search-many', {
        token,
        body: {
          queryVectors: [
            [1, 0],
            [0, 1],
          ],
          filter: { $or: [{ price: 10 }, { price: 20 }] },
        },
      }),
    );
    expect(body.results.map((list: { id: string }[]) => list.map((r) => r.id))).to.deep.equal([
      ['a', 'b'],
      ['b', 'a'],
    ]);
  });

  it('answers 400 VALIDATION_ERROR with the path of an unknown operator', async () => {
    const error = expectError(
      await api.post('/search', {
        token,
        body: { queryVector: [1, 0], filter: { $and: [{ price: { $between: [1, 2] } }] } },
      }),
      400,
      'VALIDATION_ERROR',
    );
    expect(error.details.path).to.equal('/filter/$and/0/price/$between');
  });

  it('answers 400 VALIDATION_ERROR with the path of a bad operand', async () => {
    const error = expectError(
      await api.post('/search-many', {
        token,
        body: { queryVectors: [[1, 0]], filter: { price: { $in: 5 } } },
      }),
      400,
      'VALIDATION_ERROR',
    );
    expect(error.details.path).to.equal('/filter/price/$in');
  });
});
