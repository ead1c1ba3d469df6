// PostingSlices: lists appended to in turns read back exactly, whatever the
// gaps (varints of 1 to 5 bytes) and counts, across slices and blocks.
import { expect } from 'chai';
import { PostingSlices } from '../../../src/index/text/posting-slices.js';
import { randomInt, seededRng } from '../../helpers/random.js';

describe('PostingSlices', () => {
  it('reads back interleaved lists of any gaps and counts', () => {
    const rng = seededRng(3);
    const pool = new PostingSlices();
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
    const docs = new Uint32Array(60_000),
      tfs = new Uint32Array(60_000);
    for (let id = 0; id < 200; id++) {
      const n = pool.read(id, docs, tfs);
      expect(
        Array.from({ length: n }, (_, i) => [docs[i], tfs[i]]),
        `list ${id}`,
      ).to.deep.equal(lists[id]);
    }
  });

  it('reads an empty list as nothing, and a list started again from its new start', () => {
    const pool = new PostingSlices();
    pool.start(0);
    const docs = new Uint32Array(4),
      tfs = new Uint32Array(4);
    expect(pool.read(0, docs, tfs)).to.equal(0);
    pool.append(0, 5, 1);
    pool.start(0);
    pool.append(0, 7, 3);
    expect(pool.read(0, docs, tfs)).to.equal(1);
    expect([docs[0], tfs[0]]).to.deep.equal([7, 3]);
  });
});
