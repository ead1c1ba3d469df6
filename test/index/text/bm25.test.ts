// Keyword search (BM25) against a plain reference on random corpora: scores
// to 1e-6, the same order (ties by insertion order), filters applied first
// (N and avgdl stay the session's), scoreThreshold, after replaces and deletes.
import { expect } from 'chai';
import type { AnalyzerName } from '../../../src/config.js';
import { VectorIndex } from '../../../src/index/vector-index.js';
import { loadKernelModule } from '../../../src/kernel/load-node.js';
import { expectSameRanking, referenceBm25, type TextDoc } from '../../helpers/bm25-reference.js';
import { randomInt, seededRng } from '../../helpers/random.js';
import { randomQuery, randomText, smallVector } from './corpus.js';

const newIndex = () => new VectorIndex(loadKernelModule(), 10_000);

describe('keyword search (BM25)', () => {
  for (const analyzer of ['standard', 'english'] as AnalyzerName[]) {
    it(`ranks every matching document as the reference does (${analyzer}), with and without a filter`, () => {
      for (let seed = 1; seed <= 6; seed++) {
        const rng = seededRng(seed);
        const index = newIndex();
        const docs = new Map<string, TextDoc & { g: number }>();
        let seq = 0;
        const count = 20 + randomInt(rng, 60);
        for (let i = 0; i < count; i++) {
          // Some ids written twice (the second write replaces the text and moves the id to the end), some vectors without text.
          const id = `v${randomInt(rng, count)}`;
          const g = randomInt(rng, 3);
          if (rng() < 0.15) {
            index.upsert([{ id, vector: smallVector(rng, 3).map((x) => x + 4), metadata: { g } }], { metric: 'l2', analyzer });
            docs.delete(id);
            seq++;
            continue;
          }
          const text = randomText(rng);
          index.upsert([{ id, vector: smallVector(rng, 3), text, metadata: { g } }], { metric: 'l2', analyzer });
          docs.delete(id);
          docs.set(id, { id, text, seq: seq++, g });
        }
        for (const victim of [...docs.keys()].filter(() => rng() < 0.1)) {
          index.delete([victim]);
          docs.delete(victim);
        }
        const list = [...docs.values()];
        for (let q = 0; q < 10; q++) {
          const query = randomQuery(rng);
          const label = `seed ${seed} "${query}"`;
          const out = index.search(null, { queryTexts: [query], topK: 100 });
          const expected = referenceBm25(list, analyzer, query);
          expectSameRanking(out.results[0], expected, label);
          expect(out.stats.textMatched, label).to.equal(expected.length);
          const filtered = index.search([], { queryTexts: [query], topK: 5, filter: { g: 1 } });
          expectSameRanking(filtered.results[0], referenceBm25(list, analyzer, query, (id) => docs.get(id)!.g === 1).slice(0, 5), `${label} filtered`);
        }
      }
    });
  }

  it('keeps BM25 >= scoreThreshold and cuts at topK', () => {
    const index = newIndex();
    const docs: TextDoc[] = ['red fox', 'red red fox jumps', 'blue dog', 'red', 'fox fox fox'].map((text, i) => ({ id: `d${i}`, text, seq: i }));
    index.upsert(docs.map(({ id, text }, i) => ({ id, vector: [i + 1, 1], text })));
    const all = referenceBm25(docs, 'standard', 'red fox');
    const threshold = all[2].score;
    const out = index.search(null, { queryTexts: ['red fox'], scoreThreshold: threshold });
    expect(out.results[0].map((h) => h.id)).to.deep.equal(all.filter((h) => h.score >= threshold).map((h) => h.id));
    expect(index.search(null, { queryTexts: ['red fox'], topK: 2 }).results[0].map((h) => h.id)).to.deep.equal(all.slice(0, 2).map((h) => h.id));
  });

  it('breaks ties by insertion order: the last write of an id counts', () => {
    const index = newIndex();
    index.upsert(['a', 'b', 'c', 'd'].map((id, i) => ({ id, vector: [i + 1, 1], text: 'same words here' })));
    const ids = () => index.search(null, { queryTexts: ['words'] }).results[0].map((h) => h.id);
    expect(ids()).to.deep.equal(['a', 'b', 'c', 'd']);
    index.upsert([{ id: 'b', vector: [9, 9], text: 'same words here' }]);
    index.delete(['a']);
    expect(ids()).to.deep.equal(['c', 'd', 'b']);
  });

  it('answers one list per query text, each with its own ranking', () => {
    const index = newIndex();
    index.upsert([
      { id: 'a', vector: [1, 0], text: 'alpha beta' },
      { id: 'b', vector: [0, 1], text: 'beta gamma' },
    ]);
    const out = index.search(null, { queryTexts: ['alpha', 'gamma', 'delta'] });
    expect(out.results.map((list) => list.map((h) => h.id))).to.deep.equal([['a'], ['b'], []]);
    expect(out.stats).to.include({ scanned: 0, textMatched: 2 });
  });

  it('analyses queries with standard and answers nothing while the session has no text', () => {
    const index = newIndex();
    expect(index.search(null, { queryTexts: ['anything'] }).results).to.deep.equal([[]]);
    index.upsert([{ id: 'a', vector: [1, 0] }]);
    expect(index.search(null, { queryTexts: ['anything'] }).results).to.deep.equal([[]]);
    expect(index.getConfig().analyzer).to.equal(null);
  });

  it("returns the text with includeText (null for a vector without), and the bytes of the answer's texts", () => {
    const index = newIndex();
    index.upsert([
      { id: 'a', vector: [1, 0], text: 'caf\u00e9 "quoted"' },
      { id: 'b', vector: [0, 1] },
    ]);
    const out = index.search(null, { queryTexts: ['cafe'], includeText: true });
    expect(out.results[0][0].text!.value()).to.equal('caf\u00e9 "quoted"');
    expect(out.textJsonBytes).to.equal(Buffer.byteLength(JSON.stringify('caf\u00e9 "quoted"')));
    const hybrid = index.search([[0, 1]], { queryTexts: ['cafe'], includeText: true });
    expect(hybrid.results[0].map((h) => [h.id, h.text?.value() ?? null])).to.deep.equal([
      ['a', 'caf\u00e9 "quoted"'],
      ['b', null],
    ]);
    expect(JSON.stringify(index.get('a'))).to.equal(JSON.stringify({ id: 'a', vector: [1, 0], metadata: {}, text: 'caf\u00e9 "quoted"' }));
    expect(index.get('b')).to.not.have.property('text');
    expect(index.textJsonBytes('a')).to.equal(out.textJsonBytes);
  });
});
