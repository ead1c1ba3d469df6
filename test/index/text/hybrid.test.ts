// Hybrid search: each arm's candidatePool best fused by RRF or linear
// min-max, against a reference fusion of the two arms; ties by insertion
// order; scoreThreshold on the fused score; queries by id leave their own
// vector out of both arms.
import { expect } from 'chai';
import type { Metric } from '../../../src/config.js';
import type { Fusion } from '../../../src/index/text/fusion.js';
import { VectorIndex } from '../../../src/index/vector-index.js';
import { loadKernelModule } from '../../../src/kernel/load-node.js';
import { referenceBm25, referenceFuse, type TextDoc } from '../../helpers/bm25-reference.js';
import { randomInt, randomVector, seededRng } from '../../helpers/random.js';
import { randomQuery, randomText, smallVector } from './corpus.js';

const newIndex = () => new VectorIndex(loadKernelModule(), 10_000);
const FUSIONS: Fusion[] = [{ method: 'rrf' }, { method: 'rrf', k: 5 }, { method: 'linear' }, { method: 'linear', alpha: 0.8 }, { method: 'linear', alpha: 0 }];

describe('hybrid search', () => {
  for (const metric of ['l2', 'cosine'] as Metric[]) {
    it(`fuses the two arms as the reference does (${metric}, rrf and linear)`, () => {
      for (let seed = 1; seed <= 5; seed++) {
        const rng = seededRng(100 + seed);
        const index = newIndex();
        const docs: TextDoc[] = [];
        const count = 15 + randomInt(rng, 40);
        for (let i = 0; i < count; i++) {
          const id = `v${i}`;
          const text = rng() < 0.8 ? randomText(rng) : undefined;
          index.upsert([{ id, vector: metric === 'l2' ? smallVector(rng, 4) : randomVector(rng, 4), text }], { metric });
          if (text !== undefined) docs.push({ id, text, seq: i });
        }
        const seqOf = (id: string) => Number(id.slice(1));
        for (let q = 0; q < 8; q++) {
          const query = metric === 'l2' ? smallVector(rng, 4) : randomVector(rng, 4);
          const queryText = randomQuery(rng);
          const fusion = FUSIONS[randomInt(rng, FUSIONS.length)];
          const candidatePool = 1 + randomInt(rng, 12),
            topK = 1 + randomInt(rng, candidatePool);
          const label = `seed ${seed} "${queryText}" ${JSON.stringify(fusion)} pool ${candidatePool}`;
          const vectorArm = index.search([query], { topK: candidatePool }).results[0];
          const textArm = referenceBm25(docs, 'standard', queryText).slice(0, candidatePool);
          const expected = referenceFuse(vectorArm, textArm, fusion, metric === 'l2', seqOf).slice(0, topK);
          const out = index.search([query], { queryTexts: [queryText], fusion, topK, candidatePool });
          const hits = out.results[0];
          expect(
            hits.map((h) => h.id),
            label,
          ).to.deep.equal(expected.map((h) => h.id));
          hits.forEach((hit, i) => {
            expect(Math.abs(hit.score - expected[i].score), `${label} ${hit.id}`).to.be.at.most(1e-9);
            expect([hit.vectorRank, hit.textRank], label).to.deep.equal([expected[i].vectorRank, expected[i].textRank]);
            const inVector = vectorArm.find((h) => h.id === hit.id),
              inText = textArm.find((h) => h.id === hit.id);
            expect(hit.vectorScore, label).to.equal(inVector?.score ?? null);
            if (inText) expect(Math.abs(hit.textScore! - inText.score)).to.be.at.most(1e-6);
            else expect(hit.textScore).to.equal(null);
          });
          expect(out.stats.textMatched, label).to.equal(referenceBm25(docs, 'standard', queryText).length);
        }
      }
    });
  }

  it('breaks fused ties by insertion order', () => {
    const index = newIndex();
    // Each id is first in one arm and second in the other: equal RRF scores.
    index.upsert(
      [
        { id: 'late', vector: [1, 0], text: 'other' },
        { id: 'early', vector: [0.9, 0.1], text: 'word word' },
      ],
      { metric: 'l2' },
    );
    index.upsert([{ id: 'late', vector: [1, 0], text: 'word' }], { metric: 'l2' });
    const hits = index.search([[1, 0]], { queryTexts: ['word'] }).results[0];
    expect(hits.map((h) => [h.id, h.vectorRank, h.textRank])).to.deep.equal([
      ['early', 2, 1],
      ['late', 1, 2],
    ]);
    expect(hits[0].score).to.equal(hits[1].score);
  });

  it('applies scoreThreshold to the fused score', () => {
    const index = newIndex();
    index.upsert([
      { id: 'a', vector: [1, 0], text: 'alpha' },
      { id: 'b', vector: [0, 1], text: 'beta' },
      { id: 'c', vector: [1, 1], text: 'alpha beta' },
    ]);
    const all = index.search([[1, 0]], { queryTexts: ['alpha'], fusion: { method: 'linear' } }).results[0];
    const cut = index.search([[1, 0]], { queryTexts: ['alpha'], fusion: { method: 'linear' }, scoreThreshold: all[1].score }).results[0];
    expect(cut.map((h) => h.id)).to.deep.equal(all.filter((h) => h.score >= all[1].score).map((h) => h.id));
  });

  it('with filters, searches both arms among the matching vectors only', () => {
    const index = newIndex();
    index.upsert([
      { id: 'a', vector: [1, 0], text: 'alpha', metadata: { g: 1 } },
      { id: 'b', vector: [1, 0.1], text: 'alpha alpha', metadata: { g: 2 } },
      { id: 'c', vector: [0, 1], text: 'beta', metadata: { g: 1 } },
    ]);
    const hits = index.search([[1, 0]], { queryTexts: ['alpha'], filter: { g: 1 } }).results[0];
    expect(hits.map((h) => h.id)).to.deep.equal(['a', 'c']);
    expect(hits[1]).to.include({ textRank: null, vectorRank: 2 });
  });

  it("by ids: each query vector's own id is left out of both arms", async () => {
    const index = newIndex();
    index.upsert([
      { id: 'a', vector: [1, 0], text: 'alpha' },
      { id: 'b', vector: [1, 0.2], text: 'alpha beta' },
      { id: 'c', vector: [0, 1], text: 'gamma' },
    ]);
    const out = index.searchByIds(['a', 'c'], { queryTexts: ['alpha', 'gamma'], topK: 5 });
    expect(out.results.map((list) => list.map((h) => [h.id, h.vectorRank, h.textRank]))).to.deep.equal([
      [
        ['b', 1, 1],
        ['c', 2, null],
      ],
      [
        ['b', 1, null],
        ['a', 2, null],
      ],
    ]);
  });

  it('runs the vector arm on a plan (the pool path) with the same answer as run()', () => {
    const index = newIndex();
    index.upsert([
      { id: 'a', vector: [1, 0], text: 'alpha' },
      { id: 'b', vector: [0, 1], text: 'beta' },
    ]);
    const plan = index.planSearch([[1, 0]], { queryTexts: ['beta'] });
    expect(plan).to.have.property('runOn');
    expect('run' in plan && plan.run()).to.deep.equal(index.search([[1, 0]], { queryTexts: ['beta'] }));
  });
});
