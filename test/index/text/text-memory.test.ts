// The text store's memory: each batch grows it by no more than its plan's
// textBytesAdded, the keyword index of ~150-word English-like texts takes less
// than the texts' own bytes, and a clear, a reset or deleting every text
// gives it all back.
import { expect } from 'chai';
import type { VectorInput } from '../../../src/index/types.js';
import { VectorIndex } from '../../../src/index/vector-index.js';
import { loadKernelModule } from '../../../src/kernel/load-node.js';
import { randomInt, seededRng, type Rng } from '../../helpers/random.js';

function proseMaker(rng: Rng): () => string {
  const syllables = ['ka', 'to', 'ri', 'men', 'sa', 'lo', 'ver', 'an', 'tis', 'po', 'du', 'gra', 'el', 'mi'];
  const words = Array.from({ length: 8000 }, () => {
    let word = '';
    for (let n = 1 + randomInt(rng, 3); n > 0; n--) word += syllables[randomInt(rng, syllables.length)];
    return word;
  });
  // Roughly Zipf: the square of a uniform number favours the first words.
  return () => Array.from({ length: 150 }, (_, i) => words[Math.floor(rng() ** 2.5 * words.length)] + (i % 10 === 9 ? '.' : '')).join(' ');
}

describe('text store memory', () => {
  it("grows by no more than each plan's textBytesAdded", () => {
    const rng = seededRng(11);
    const prose = proseMaker(rng);
    const index = new VectorIndex(loadKernelModule(), 20_000);
    let id = 0;
    for (let batch = 0; batch < 40; batch++) {
      const size = 1 + randomInt(rng, 200);
      const records: VectorInput[] = Array.from({ length: size }, () => ({
        id: `v${rng() < 0.2 ? randomInt(rng, id + 1) : id++}`,
        vector: [1, 2],
        text: prose(),
      }));
      const plan = index.prepareUpsert(records);
      const before = index.stats().textBytes;
      index.applyUpsert(plan);
      expect(index.stats().textBytes - before, `batch ${batch}`).to.be.at.most(plan.textBytesAdded);
    }
  });

  it("keeps dictionary and postings under the texts' bytes, and gives everything back", () => {
    const prose = proseMaker(seededRng(12));
    const index = new VectorIndex(loadKernelModule(), 20_000);
    let textBytes = 0;
    for (let at = 0; at < 5000; at += 500) {
      const records = Array.from({ length: 500 }, (_, i) => ({ id: `v${at + i}`, vector: [1, 2], text: prose() }));
      for (const r of records) textBytes += Buffer.byteLength(r.text);
      index.upsert(records);
    }
    const { jsonBytes } = index.stats().text;
    // textBytes holds the stored texts (about jsonBytes, in chunks) and the index.
    expect((index.stats().textBytes - jsonBytes) / textBytes).to.be.below(1.0);
    index.delete(Array.from({ length: 5000 }, (_, i) => `v${i}`));
    expect(index.stats().textBytes).to.equal(0);
    index.upsert([{ id: 'a', vector: [1, 2], text: prose() }]);
    index.clear();
    expect(index.stats().textBytes).to.equal(0);
  });
});
