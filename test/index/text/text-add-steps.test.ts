// A long text added in steps (TextIndex.addSteps, as a sliced upsert adds
// its texts): the index answers bit for bit as one that added the same texts
// in one step, replaces and deletes included, on random texts of several
// scripts, the per-term arrays growing an array a step; a step looks up
// `addStep` terms; another add while one is paused is refused.
import { expect } from 'chai';
import { analyze, termBytes } from '../../../src/index/text/analyzer.js';
import { TextIndex } from '../../../src/index/text/text-index.js';
import { randomInt, seededRng, type Rng } from '../../helpers/random.js';

const BM25 = { k1: 1.2, b: 0.75 };

/** Up to 80 words of 1 to 5 letters of `alphabet`: many new terms, some shared. */
function randomText(rng: Rng, alphabet: string): string {
  const letters = Array.from(alphabet);
  return Array.from({ length: 1 + randomInt(rng, 80) }, () =>
    Array.from({ length: 1 + randomInt(rng, 5) }, () => letters[randomInt(rng, letters.length)]).join(''),
  ).join(' ');
}

const answers = (index: TextIndex, rowCount: number, queries: string[][]) =>
  queries.map((terms) => {
    const found = index.search(terms, rowCount, 1000, BM25, null);
    return { rows: [...found.rows], scores: [...found.scores], matched: found.matched };
  });

describe('keyword index: a text added in steps', () => {
  for (const alphabet of ['abcdefghijklmnop', 'абвгдежзийклмноп', '東京都大阪府日本語']) {
    it(`answers as an index that added the texts directly (${alphabet})`, () => {
      const rng = seededRng(alphabet.charCodeAt(0));
      const stepped = new TextIndex(0, 16, 8);
      const direct = new TextIndex(0, 16, 8);
      const rows: string[] = [];
      let seq = 0,
        pauses = 0,
        looked = 0;
      for (let round = 0; round < 60; round++) {
        const replace = rows.length > 0 && rng() < 0.4;
        const row = replace ? randomInt(rng, rows.length) : rows.length;
        const text = randomText(rng, alphabet);
        const terms = termBytes('standard', text);
        // A replace: the old document dropped, the new one added (in steps, or in one).
        stepped.remove(row);
        const steps = stepped.addSteps(row, terms, seq);
        while (!steps.next().done) pauses++;
        looked += terms.count;
        direct.remove(row);
        direct.add(row, terms, seq);
        seq++;
        rows[row] = text;
        if (rng() < 0.2 && rows.length > 1) {
          // A delete: the last row moves into the hole.
          const gone = randomInt(rng, rows.length),
            last = rows.length - 1;
          for (const index of [stepped, direct]) {
            index.remove(gone);
            if (gone !== last) index.move(last, gone);
          }
          rows[gone] = rows[last];
          rows.pop();
        }
        for (const index of [stepped, direct]) index.afterChange(rows.length);
        const live = [...new Set(rows.flatMap((t) => analyze('standard', t)))];
        const queries = [...live.map((t) => [t]), live.filter(() => rng() < 0.3)];
        expect(stepped.termCount, `round ${round}`).to.equal(live.length);
        expect(stepped.termCount, `round ${round}`).to.equal(direct.termCount);
        expect(answers(stepped, rows.length, queries), `round ${round}`).to.deep.equal(answers(direct, rows.length, queries));
      }
      // A pause after every 8 terms looked up (each text's count starts at 0), and after each of the 9 per-term arrays doubled (from 16 ids: fewer than 12 doublings each here).
      expect(pauses).to.be.at.least(Math.floor(looked / 8) - 60);
      expect(pauses).to.be.at.most(Math.ceil(looked / 8) + 9 * 12);
    });
  }

  it('refuses another add while one is paused; the paused one has written no document', () => {
    const index = new TextIndex(0, 16, 2);
    index.add(0, termBytes('standard', 'alpha beta'), 0);
    const steps = index.addSteps(1, termBytes('standard', 'gamma delta epsilon zeta'), 1);
    steps.next();
    index.add(2, termBytes('standard', 'eta theta'), 2);
    expect(() => steps.next()).to.throw(/another text was added/);
    expect(index.docCount).to.equal(2);
    expect(index.has(1)).to.equal(false);
    const found = index.search(['gamma'], 3, 10, BM25, null);
    expect(found.matched).to.equal(0);
  });

  it('grows the per-term arrays an array a step when they are full, before a new term needs them', () => {
    const index = new TextIndex(0, 16, 1_000_000);
    // 16 distinct terms fill the first arrays (16 ids).
    index.add(0, termBytes('standard', Array.from({ length: 16 }, (_, i) => `w${i}`).join(' ')), 0);
    const steps = index.addSteps(1, termBytes('standard', 'fresh'), 1);
    let pauses = 0;
    while (!steps.next().done) pauses++;
    // df, entryCount, listedBy, countIn, and the postings' head, writeAt, sliceEnd, level, lastDoc: 9 doublings, a pause after each.
    expect(pauses).to.equal(9);
    expect(index.search(['fresh'], 2, 10, BM25, null).matched).to.equal(1);
  });
});
