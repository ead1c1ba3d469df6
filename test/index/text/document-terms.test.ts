// DocumentTerms: each document's distinct term ids read back exactly (as a
// sorted list; a plain array is the reference), whatever their gaps (varints
// of 1 to 5 bytes), and a compaction keeps exactly the documents it is told
// to, renumbered.
import { expect } from 'chai';
import { DocumentTerms } from '../../../src/index/text/document-terms.js';
import { randomInt, seededRng, type Rng } from '../../helpers/random.js';

/** Distinct ids below 2^31 (term ids are), mostly small, some far apart. */
function randomIds(rng: Rng): number[] {
  const ids = new Set<number>();
  const n = randomInt(rng, 300);
  for (let i = 0; i < n; i++) {
    const roll = rng();
    ids.add(roll < 0.7 ? randomInt(rng, 500) : roll < 0.9 ? randomInt(rng, 2 ** 21) : randomInt(rng, 2 ** 31));
  }
  if (rng() < 0.1) ids.add(0).add(2 ** 31 - 1);
  return [...ids];
}

const sorted = (ids: number[]) => [...ids].sort((a, b) => a - b);

function readAll(terms: DocumentTerms, doc: number): number[] {
  const { ids, read } = terms.read(doc, new Int32Array(4));
  return [...ids.subarray(0, read)];
}

describe('DocumentTerms', () => {
  it("reads back each document's ids, sorted, across compactions", () => {
    const rng = seededRng(41);
    const terms = new DocumentTerms();
    /** The reference: the live documents' ids in document order (null: dropped). */
    let docs: (number[] | null)[] = [];
    for (let step = 0; step < 3000; step++) {
      if (rng() < 0.97) {
        const ids = randomIds(rng);
        terms.add(docs.length, Int32Array.from(ids), ids.length);
        docs.push(ids);
        if (rng() < 0.3) docs[randomInt(rng, docs.length)] = null;
        continue;
      }
      const renumbered = new Int32Array(docs.length);
      let live = 0;
      for (const [doc, ids] of docs.entries()) renumbered[doc] = ids === null ? -1 : live++;
      terms.compact(renumbered);
      docs = docs.filter((ids) => ids !== null);
      expect(terms.usedBytes).to.be.at.most(docs.reduce((sum, ids) => sum + 5 * ids!.length, 0));
      for (const [doc, ids] of docs.entries()) expect(readAll(terms, doc), `step ${step} doc ${doc}`).to.deep.equal(sorted(ids!));
    }
    for (const [doc, ids] of docs.entries()) if (ids !== null) expect(readAll(terms, doc), `doc ${doc}`).to.deep.equal(sorted(ids));
  });

  it('takes about a byte a term for dense ids, and refuses a document out of order', () => {
    const terms = new DocumentTerms();
    const ids = Int32Array.from({ length: 1000 }, (_, i) => 3 * (999 - i));
    terms.add(0, ids, 1000);
    expect(terms.usedBytes).to.equal(1000);
    expect(() => terms.add(2, ids, 1)).to.throw(/document 2/);
  });
});
