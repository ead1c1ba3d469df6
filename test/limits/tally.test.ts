// Tally (src/limits/tally.ts): counts per key and in all, against a plain
// list of what is in flight, on random adds and removes.
import { expect } from 'chai';
import { Tally } from '../../src/limits/tally.js';
import { randomInt, seededRng } from '../helpers/random.js';

describe('Tally', () => {
  it('counts per key and in all as a list of what is in flight does', () => {
    const rng = seededRng(7);
    const tally = new Tally();
    const inFlight: { key: string; count: number }[] = [];
    for (let step = 0; step < 5000; step++) {
      if (inFlight.length > 0 && randomInt(rng, 2) === 0) {
        const { key, count } = inFlight.splice(randomInt(rng, inFlight.length), 1)[0];
        tally.remove(key, count);
      } else {
        const item = { key: `k${randomInt(rng, 6)}`, count: 1 + randomInt(rng, 4) };
        inFlight.push(item);
        tally.add(item.key, item.count);
      }
      const key = `k${randomInt(rng, 7)}`;
      expect(tally.of(key)).to.equal(inFlight.filter((item) => item.key === key).reduce((sum, item) => sum + item.count, 0));
      expect(tally.total).to.equal(inFlight.reduce((sum, item) => sum + item.count, 0));
    }
  });
});
