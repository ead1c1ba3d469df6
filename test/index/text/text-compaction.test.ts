// A keyword index compacts in steps (TextIndex.afterChangeSteps): after a
// compaction run a step at a time, every answer is bit for bit that of a
// fresh index built from the live texts alone, on random texts of several
// scripts with adds, replaces, deletes and moves between compactions; the
// work is split into steps of about `compactStep` postings; and an index
// left halfway through a compaction answers as before it began.
import { expect } from 'chai';
import { analyze, termBytes } from '../../../src/index/text/analyzer.js';
import { TextIndex } from '../../../src/index/text/text-index.js';
import { randomInt, seededRng, type Rng } from '../../helpers/random.js';

const BM25 = { k1: 1.2, b: 0.75 };
const ALPHABETS = ['abcdefghij', 'абвгдежзий', '東京都大阪府日本', '😀👍🏽🇫🇷'];

interface Row {
  text: string;
  seq: number;
}

/** A text of up to 60 words of 1 to 4 letters of `alphabet` (so terms repeat within and across texts). */
function randomText(rng: Rng, alphabet: string): string {
  const letters = Array.from(alphabet);
  return Array.from({ length: 1 + randomInt(rng, 60) }, () =>
    Array.from({ length: 1 + randomInt(rng, 4) }, () => letters[randomInt(rng, letters.length)]).join(''),
  ).join(' ');
}

/** A fresh index of the rows' texts (row r as row r, at its seq), compacting never. */
function fresh(rows: readonly (Row | null)[]): TextIndex {
  const index = new TextIndex();
  rows.forEach((row, r) => {
    if (row) index.add(r, termBytes('standard', row.text), row.seq);
  });
  return index;
}

/** Every answer of `index` to queries of each live term and a few random ones: rows, scores and matched, compared exactly. */
function answers(index: TextIndex, rowCount: number, queries: string[][]): unknown[] {
  return queries.map((terms) => {
    const found = index.search(terms, rowCount, 1000, BM25, null);
    return { rows: [...found.rows], scores: [...found.scores], matched: found.matched };
  });
}

/** Drive `index.afterChangeSteps` to its end; the steps it took. */
function compactInSteps(index: TextIndex, rowCount: number): number {
  const steps = index.afterChangeSteps(rowCount);
  let pauses = 0;
  while (!steps.next().done) pauses++;
  return pauses;
}

describe('keyword index compaction in steps', () => {
  for (const alphabet of ALPHABETS) {
    it(`answers as a fresh index of the live texts after each compaction in steps (${alphabet})`, () => {
      const rng = seededRng(alphabet.length * 101);
      // Slack 0 and steps of 16 postings: a compaction at almost every change, each one in many steps.
      const index = new TextIndex(0, 16);
      const rows: (Row | null)[] = [];
      let seq = 0;
      let compactions = 0;
      for (let round = 0; round < 80; round++) {
        const op = randomInt(rng, 3);
        if (op === 0 || rows.length < 4) {
          for (let n = 1 + randomInt(rng, 5); n > 0; n--) {
            const row = { text: randomText(rng, alphabet), seq: seq++ };
            rows.push(row);
            index.add(rows.length - 1, termBytes('standard', row.text), row.seq);
          }
        } else if (op === 1) {
          // Replace: the old document removed, the new one added at the same row.
          for (let n = 1 + randomInt(rng, 5); n > 0; n--) {
            const r = randomInt(rng, rows.length);
            index.remove(r);
            rows[r] = { text: randomText(rng, alphabet), seq: seq++ };
            index.add(r, termBytes('standard', rows[r]!.text), rows[r]!.seq);
          }
        } else {
          // Delete as a VectorIndex does: the last row moves into the hole.
          for (let n = 1 + randomInt(rng, 3); n > 0 && rows.length > 1; n--) {
            const r = randomInt(rng, rows.length),
              last = rows.length - 1;
            index.remove(r);
            if (r !== last) {
              index.move(last, r);
              rows[r] = rows[last];
            }
            rows.pop();
          }
        }
        const due = index.compactionDue();
        const steps = compactInSteps(index, rows.length);
        if (due) compactions++;
        if (due) expect(steps, `round ${round}`).to.be.greaterThan(1);
        const terms = [...new Set(rows.flatMap((row) => (row ? analyze('standard', row.text) : [])))];
        const queries = [...terms.map((t) => [t]), ...Array.from({ length: 5 }, () => terms.filter(() => rng() < 0.2)), ['absent']];
        const reference = fresh(rows);
        expect(index.termCount, `round ${round}`).to.equal(reference.termCount);
        expect(index.docCount, `round ${round}`).to.equal(reference.docCount);
        expect(answers(index, rows.length, queries), `round ${round}`).to.deep.equal(answers(reference, rows.length, queries));
      }
      expect(compactions).to.be.greaterThan(4);
    });
  }

  it('pauses after about every compactStep postings: a larger step, fewer pauses', () => {
    const rng = seededRng(5);
    const build = (step: number) => {
      const index = new TextIndex(0, step);
      for (let r = 0; r < 400; r++) index.add(r, termBytes('standard', randomText(rng, 'abcdefghijklmnop')), r);
      // Every other document gone: dead postings outnumber live ones.
      for (let r = 0; r < 400; r += 2) index.remove(r);
      return index;
    };
    const small = build(64),
      large = build(4096);
    expect(small.compactionDue()).to.equal(true);
    const smallSteps = compactInSteps(small, 400),
      largeSteps = compactInSteps(large, 400);
    // 400 documents of up to 60 words: thousands of postings read, so dozens of steps of 64.
    expect(smallSteps).to.be.greaterThan(30);
    expect(largeSteps).to.be.lessThan(smallSteps / 8);
    expect(small.compactionDue()).to.equal(false);
  });

  it('left halfway, changes nothing: the index answers as before the compaction began', () => {
    const rng = seededRng(9);
    const index = new TextIndex(0, 8);
    const rows: Row[] = [];
    for (let r = 0; r < 50; r++) {
      rows.push({ text: randomText(rng, 'abcdef'), seq: r });
      index.add(r, termBytes('standard', rows[r].text), r);
    }
    // Two of every three gone: dead postings outnumber live ones.
    for (let r = 0; r < 50; r++) if (r % 3 !== 0) index.remove(r);
    expect(index.compactionDue()).to.equal(true);
    const terms = [...new Set(rows.flatMap((row) => analyze('standard', row.text)))].map((t) => [t]);
    const before = answers(index, 50, terms);
    const bytesBefore = index.byteLength;
    const steps = index.afterChangeSteps(50);
    // Until the new postings being built are counted (they are while the compaction runs).
    while (index.byteLength === bytesBefore) expect(steps.next().done).to.equal(false);
    expect(index.byteLength).to.be.greaterThan(bytesBefore);
    expect(steps.next().done).to.equal(false);
    steps.return();
    expect(index.byteLength).to.equal(bytesBefore);
    expect(answers(index, 50, terms)).to.deep.equal(before);
    expect(index.compactionDue()).to.equal(true);
  });
});
