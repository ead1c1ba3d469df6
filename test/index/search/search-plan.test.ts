// A plan run a query at a time with the event loop given back
// (SearchPlan.runSliced) gives what run() gives at once: keyword, hybrid and
// vector searches, with metadata and texts included, by vectors and by ids,
// on random data; and it lets timers run between its queries.
import { expect } from 'chai';
import type { Metric } from '../../../src/config.js';
import type { SearchOptions, SearchOutput } from '../../../src/index/types.js';
import { VectorIndex } from '../../../src/index/vector-index.js';
import { loadKernelModule } from '../../../src/kernel/load-node.js';
import { Slices } from '../../../src/limits/slices.js';
import { randomInt, randomVector, seededRng, type Rng } from '../../helpers/random.js';
import { randomQuery, randomText } from '../text/corpus.js';

function randomIndex(rng: Rng, metric: Metric, count: number): VectorIndex {
  const index = new VectorIndex(loadKernelModule(), 10_000);
  for (let i = 0; i < count; i++) {
    const text = rng() < 0.85 ? randomText(rng) : undefined;
    const metadata = rng() < 0.7 ? { n: randomInt(rng, 5), tag: `t${randomInt(rng, 3)}` } : undefined;
    index.upsert([{ id: `v${i}`, vector: randomVector(rng, 6), text, metadata }], { metric });
  }
  return index;
}

describe('SearchPlan.runSliced', () => {
  it('gives the results run() gives, for every kind of search, with includes, filters and thresholds', async () => {
    let compared = 0;
    for (let seed = 1; seed <= 6; seed++) {
      const rng = seededRng(500 + seed);
      const metric: Metric = seed % 2 ? 'cosine' : 'l2';
      const index = randomIndex(rng, metric, 40 + randomInt(rng, 80));
      for (let q = 0; q < 12; q++) {
        const n = 1 + randomInt(rng, 8);
        const texts = Array.from({ length: n }, () => randomQuery(rng));
        const vectors = Array.from({ length: n }, () => randomVector(rng, 6));
        const options: SearchOptions = {
          topK: 1 + randomInt(rng, 10),
          includeMetadata: rng() < 0.5,
          includeText: rng() < 0.5,
          filter: rng() < 0.3 ? { tag: 't1' } : undefined,
        };
        const kind = randomInt(rng, 4);
        const fusion = rng() < 0.5 ? ({ method: 'linear' } as const) : undefined;
        const byIdTexts = rng() < 0.5 ? [texts[0], texts[0]] : undefined;
        const plan = () =>
          kind === 0
            ? index.planSearch(null, { ...options, queryTexts: texts })
            : kind === 1
              ? index.planSearch(vectors, { ...options, queryTexts: texts, fusion })
              : kind === 2
                ? index.planSearch(vectors, options)
                : index.planSearchByIds(['v0', 'v3'], { ...options, queryTexts: byIdTexts });
        let once: SearchOutput;
        try {
          once = plan().run();
        } catch (err) {
          // A query text without terms: refused the same way, before anything runs.
          expect(() => plan()).to.throw((err as Error).message);
          continue;
        }
        const sliced = await plan().runSliced(null, new Slices(0));
        expect(sliced, `seed ${seed} query ${q} kind ${kind}`).to.deep.equal(once);
        compared++;
      }
    }
    expect(compared).to.be.greaterThan(50);
  });

  it('gives the same results when searches pause midway through their terms side by side (each its own scratch)', async () => {
    const rng = seededRng(8);
    const index = randomIndex(rng, 'cosine', 150);
    for (let round = 0; round < 20; round++) {
      const searches = Array.from({ length: 3 }, () => ({
        texts: Array.from({ length: 1 + randomInt(rng, 4) }, () => `${randomQuery(rng)} ${randomQuery(rng)}`),
        vectors: null as number[][] | null,
      }));
      searches[1].vectors = searches[1].texts.map(() => randomVector(rng, 6));
      const plan = (i: number) => index.planSearch(searches[i].vectors, { queryTexts: searches[i].texts, topK: 5, includeText: true });
      const once = searches.map((_, i) => plan(i).run());
      const running = searches.map((_, i) => plan(i).runSliced(null, new Slices(0)));
      // A search run at once while the others are paused midway.
      expect(plan(2).run()).to.deep.equal(once[2]);
      expect(await Promise.all(running)).to.deep.equal(once);
    }
  });

  it('gives timers a turn between the queries of a search-many', async () => {
    const rng = seededRng(7);
    const index = randomIndex(rng, 'cosine', 200);
    const texts = Array.from({ length: 64 }, () => randomQuery(rng));
    let turns = 0;
    let searching = true;
    const tick = () => {
      if (!searching) return;
      turns++;
      setImmediate(tick);
    };
    setImmediate(tick);
    await index.planSearch(null, { queryTexts: texts, topK: 10 }).runSliced(null, new Slices(0));
    searching = false;
    // Slices of 0 ms are due after every query: a turn between each two.
    expect(turns).to.be.at.least(60);
    turns = 0;
    searching = true;
    setImmediate(tick);
    index.planSearch(null, { queryTexts: texts, topK: 10 }).run();
    searching = false;
    expect(turns).to.equal(0);
  });
});
