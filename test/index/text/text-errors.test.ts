// The refusals of texts and keyword queries: ANALYZER_LOCKED, QUERY_TEXT_EMPTY,
// a text over the limit, fusion without both arms, mismatched counts; a
// refused batch stores nothing.
import { expect } from 'chai';
import { VectorIndex } from '../../../src/index/vector-index.js';
import { loadKernelModule } from '../../../src/kernel/load-node.js';
import { expectApiError } from '../../helpers/errors.js';

const newIndex = (maxTextBytes?: number) => new VectorIndex(loadKernelModule(), 1000, maxTextBytes);

describe('text refusals', () => {
  it('locks the analyzer with the first add that names one or has a text: another one is ANALYZER_LOCKED (409) until reset, not clear', () => {
    const index = newIndex();
    index.upsert([{ id: 'a', vector: [1, 0] }]);
    expect(index.getConfig().analyzer, 'none named, no text yet').to.equal(null);
    index.upsert([{ id: 'a', vector: [1, 0] }], { analyzer: 'english' });
    expect(index.getConfig().analyzer, 'named, no text yet').to.equal('english');
    index.upsert([{ id: 'b', vector: [1, 0], text: 'hello' }], { analyzer: 'english' });
    expect(index.getConfig().analyzer).to.equal('english');
    const err = expectApiError(() => index.upsert([{ id: 'c', vector: [1, 0], text: 'x' }], { analyzer: 'standard' }), 'ANALYZER_LOCKED');
    expect(err.status).to.equal(409);
    expect(err.details).to.deep.equal({ path: '/analyzer', expected: 'english', actual: 'standard' });
    index.upsert([{ id: 'c', vector: [1, 0], text: 'runs' }]);
    index.clear();
    expectApiError(() => index.upsert([{ id: 'c', vector: [1, 0], text: 'x' }], { analyzer: 'standard' }), 'ANALYZER_LOCKED');
    index.reset();
    expect(index.getConfig().analyzer).to.equal(null);
    index.upsert([{ id: 'c', vector: [1, 0], text: 'x' }], { analyzer: 'standard' });
    expect(index.getConfig().analyzer).to.equal('standard');
  });

  it('refuses a query text without terms with QUERY_TEXT_EMPTY at its path', () => {
    const index = newIndex();
    index.upsert([{ id: 'a', vector: [1, 0], text: 'the dog' }], { analyzer: 'english' });
    for (const [text, j] of [
      ['', 0],
      ['  ...!', 1],
      ['the and of', 1],
    ] as const) {
      const texts = j === 0 ? [text] : ['dog', text];
      const err = expectApiError(() => index.search(null, { queryTexts: texts }), 'QUERY_TEXT_EMPTY');
      expect(err.status).to.equal(400);
      expect(err.details).to.deep.equal({ path: `/queryTexts/${j}`, analyzer: 'english' });
    }
    const err = expectApiError(() => index.search([[1, 0]], { queryTexts: ['the'], textPathOf: () => '/queryText' }), 'QUERY_TEXT_EMPTY');
    expect(err.details).to.include({ path: '/queryText' });
    // "the" is a term under standard.
    expect(newIndex().search(null, { queryTexts: ['the'] }).results).to.deep.equal([[]]);
  });

  it('refuses a text over maxTextBytes (UTF-8) with VALIDATION_ERROR at its path, storing nothing of the batch', () => {
    const index = newIndex(8);
    index.upsert([{ id: 'a', vector: [1, 0], text: '12345678' }]);
    const err = expectApiError(
      () =>
        index.upsert([
          { id: 'b', vector: [1, 0] },
          { id: 'c', vector: [1, 0], text: 'caf\u00e9 caf' },
        ]),
      'VALIDATION_ERROR',
    );
    expect(err.details).to.deep.equal({ path: '/vectors/1/text', limit: 8, actual: 9 });
    expect(index.size).to.equal(1);
    expect(index.has('b')).to.equal(false);
  });

  it('refuses a text that is not a string', () => {
    const err = expectApiError(
      () => newIndex().upsert([{ id: 'a', vector: [1, 0], text: 42 as unknown as string }], { pathOf: (i) => `/x/${i}` }),
      'VALIDATION_ERROR',
    );
    expect(err.details).to.deep.equal({ path: '/x/0/text' });
  });

  it('refuses fusion without both arms with VALIDATION_ERROR at /fusion', () => {
    const index = newIndex();
    index.upsert([{ id: 'a', vector: [1, 0], text: 'alpha' }]);
    for (const run of [
      () => index.search([[1, 0]], { fusion: { method: 'rrf' } }),
      () => index.search(null, { queryTexts: ['alpha'], fusion: { method: 'linear' } }),
      () => index.searchByIds(['a'], { fusion: { method: 'rrf' } }),
    ]) {
      expect(expectApiError(run, 'VALIDATION_ERROR').details).to.deep.equal({ path: '/fusion' });
    }
  });

  it('refuses a hybrid search whose texts and vectors differ in number', () => {
    const index = newIndex();
    index.upsert([{ id: 'a', vector: [1, 0], text: 'alpha' }]);
    const err = expectApiError(
      () =>
        index.search(
          [
            [1, 0],
            [0, 1],
          ],
          { queryTexts: ['alpha'] },
        ),
      'VALIDATION_ERROR',
    );
    expect(err.details).to.include({ path: '/queryTexts', expected: 2, actual: 1 });
  });

  it('still refuses a bad filter or query vector in a keyword or hybrid search', () => {
    const index = newIndex();
    index.upsert([{ id: 'a', vector: [1, 0], text: 'alpha' }]);
    expectApiError(() => index.search(null, { queryTexts: ['alpha'], filter: { $bogus: 1 } as never }), 'VALIDATION_ERROR');
    expectApiError(() => index.search([[1, 0, 0]], { queryTexts: ['alpha'] }), 'DIMENSION_MISMATCH');
  });
});
