// PostingPool: lists appended to in turns read back exactly, whatever the
// gaps (varints of 1 to 5 bytes) and counts, across slices and blocks.
import { expect } from 'chai';
import { PostingPool } from '../../../src/index/text/posting-pool.js';
import { randomInt, seededRng } from '../../helpers/random.js';

describe('PostingPool', () => {
  it('reads back interleaved lists of any gaps and counts', () => {
    const rng = seededRng(3);
    const pool = new PostingPool();
    const lists: [number, number][][] = [];
    for (let id = 0; id < 200; id++) {
      pool.start(id);
      lists.push([]);
    }
    const last = new Array<number>(200).fill(-1);
    for (let step = 0; step < 60_000; step++) {
      const id = randomInt(rng, 200) % (1 + randomInt(rng, 200));
      const roll = rng();
      const gap = roll < 0.7 ? 1 + randomInt(rng, 60) : roll < 0.9 ? randomInt(rng, 20_000) + 1 : randomInt(rng, 2 ** 26) + 1;
      const doc = last[id] < 0 ? gap - 1 : last[id] + gap;
      if (doc >= 2 ** 31) continue; // document ids stay below 2^31 (a few times the rows)
      const tf = rng() < 0.6 ? 1 : rng() < 0.9 ? 2 + randomInt(rng, 200) : 1 + randomInt(rng, 2 ** 21);
      pool.append(id, doc, tf);
      lists[id].push([doc, tf]);
      last[id] = doc;
    }
    expect(pool.byteLength).to.be.above(32 * 1024);
    for (let id = 0; id < 200; id++) {
      const read: [number, number][] = [];
      pool.forEach(id, (doc, tf) => read.push([doc, tf]));
      expect(read, `list ${id}`).to.deep.equal(lists[id]);
    }
  });

  it('reads an empty list as nothing, and a list started again from its new start', () => {
    const pool = new PostingPool();
    pool.start(0);
    const seen: number[] = [];
    pool.forEach(0, (doc) => seen.push(doc));
    expect(seen).to.deep.equal([]);
    pool.append(0, 5, 1);
    pool.start(0);
    pool.append(0, 7, 3);
    pool.forEach(0, (doc, tf) => seen.push(doc, tf));
    expect(seen).to.deep.equal([7, 3]);
  });
});
