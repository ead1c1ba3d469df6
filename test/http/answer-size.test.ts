// The answer's size estimate in slices (hitsBytesSliced, search-many's):
// the same figure as hitsBytes in one step, on random hits (ids of every
// length and script, hybrid hits among them), and the event loop gets turns
// while it counts.
import { expect } from 'chai';
import { hitsBytes, hitsBytesSliced } from '../../src/http/answer-size.js';
import type { SearchHit } from '../../src/index/types.js';
import { Slices } from '../../src/limits/slices.js';
import { randomInt, seededRng } from '../helpers/random.js';

const CHARS = ['a', 'Z', '0', '"', '\\', 'é', 'ж', '東', '😀', '\n'];

describe('answer size in slices', () => {
  it('counts what hitsBytes counts in one step, a query at a time, giving timers turns', async () => {
    const rng = seededRng(12);
    for (let run = 0; run < 20; run++) {
      const results: SearchHit[][] = Array.from({ length: 1 + randomInt(rng, 64) }, () =>
        Array.from({ length: randomInt(rng, 100) }, () => {
          const hit: SearchHit = { id: Array.from({ length: randomInt(rng, 256) }, () => CHARS[randomInt(rng, CHARS.length)]).join(''), score: rng() };
          if (rng() < 0.3) Object.assign(hit, { vectorScore: rng(), vectorRank: 1, textScore: rng(), textRank: 2 });
          return hit;
        }),
      );
      const jsonBytes = randomInt(rng, 10_000);
      // Another task counting the loop's turns while the count runs.
      let ticks = 0;
      let ticker = setImmediate(function tick() {
        ticks++;
        ticker = setImmediate(tick);
      });
      // Slices of 0 ms: a pause after every query.
      const sliced = await hitsBytesSliced(results, jsonBytes, new Slices(0));
      clearImmediate(ticker);
      expect(sliced, `run ${run}`).to.equal(hitsBytes(results, jsonBytes));
      expect(ticks, `run ${run}`).to.be.at.least(results.length - 1);
    }
  });
});
