// A long text's terms entered ahead of its add, in steps
// (TextIndex.enterTermsSteps, as a sliced upsert does): the index then
// answers bit for bit as one that added the same texts directly, replaces
// and deletes included, on random texts of several scripts; the steps hold
// about `enterStep` terms each.
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

describe('keyword index: terms entered ahead in steps', () => {
  for (const alphabet of ['abcdefghijklmnop', 'абвгдежзийклмноп', '東京都大阪府日本語']) {
    it(`answers as an index that added the texts directly (${alphabet})`, () => {
      const rng = seededRng(alphabet.charCodeAt(0));
      const ahead = new TextIndex(0, 16, 8);
      const direct = new TextIndex(0, 16, 8);
      const rows: string[] = [];
      let seq = 0,
        pauses = 0,
        entered = 0;
      for (let round = 0; round < 60; round++) {
        const replace = rows.length > 0 && rng() < 0.4;
        const row = replace ? randomInt(rng, rows.length) : rows.length;
        const text = randomText(rng, alphabet);
        const terms = termBytes('standard', text);
        // As writeRest does: the terms entered first, then the row written (its old document dropped, the new one added).
        const steps = ahead.enterTermsSteps(terms);
        while (!steps.next().done) pauses++;
        entered += terms.count;
        for (const index of [ahead, direct]) {
          index.remove(row);
          index.add(row, terms, seq);
        }
        seq++;
        rows[row] = text;
        if (rng() < 0.2 && rows.length > 1) {
          // A delete: the last row moves into the hole.
          const gone = randomInt(rng, rows.length),
            last = rows.length - 1;
          for (const index of [ahead, direct]) {
            index.remove(gone);
            if (gone !== last) index.move(last, gone);
          }
          rows[gone] = rows[last];
          rows.pop();
        }
        for (const index of [ahead, direct]) index.afterChange(rows.length);
        const live = [...new Set(rows.flatMap((t) => analyze('standard', t)))];
        const queries = [...live.map((t) => [t]), live.filter(() => rng() < 0.3)];
        expect(ahead.termCount, `round ${round}`).to.equal(live.length);
        expect(ahead.termCount, `round ${round}`).to.equal(direct.termCount);
        expect(answers(ahead, rows.length, queries), `round ${round}`).to.deep.equal(answers(direct, rows.length, queries));
      }
      // A pause every 8 terms (a text's count restarts it).
      expect(pauses).to.be.at.least(Math.floor(entered / 8) - 60);
    });
  }
});
