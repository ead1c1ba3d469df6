// RowPostings against a plain Map of row sets on random adds, removes and
// moves: every kind of posting (one row, a list in the slab, a bitmap) and
// enough lists that the slab spans several pages.
import { expect } from 'chai';
import { RowPostings } from '../../../src/index/metadata/row-postings.js';
import { randomInt, seededRng } from '../../helpers/random.js';

const ROWS = 3000;
const IDS = 2500;

function rowsOf(postings: RowPostings, id: number): number[] {
  const words = new Uint32Array((ROWS >>> 5) + 2);
  postings.orInto(id, words);
  const rows: number[] = [];
  for (let w = 0; w < words.length; w++) for (let b = 0; b < 32; b++) if (words[w] & (1 << b)) rows.push(w * 32 + b);
  return rows;
}

describe('RowPostings', () => {
  for (const seed of [55, 56, 57, 58])
    it(`holds the rows a Map of sets holds, across lists, bitmaps and slab pages (seed ${seed})`, () => {
      const rng = seededRng(seed);
      const postings = new RowPostings();
      postings.ensureIds(IDS);
      const reference = new Map<number, Set<number>>();
      for (let id = 0; id < IDS; id++) reference.set(id, new Set());
      // Most postings stay lists (under ROWS / 32 rows), some become bitmaps.
      const target = (id: number) => (id % 10 === 0 ? 200 : 1 + (id % 90));
      const check = () => {
        for (let i = 0; i < 200; i++) {
          const id = randomInt(rng, IDS);
          const expected = [...reference.get(id)!].sort((a, b) => a - b);
          expect(rowsOf(postings, id), `id ${id}`).to.deep.equal(expected);
          expect(postings.countOf(id)).to.equal(expected.length);
          // forEachRow visits the same rows; countIn counts those set in a random mask.
          const visited: number[] = [];
          postings.forEachRow(id, (row) => visited.push(row));
          expect(visited.sort((a, b) => a - b)).to.deep.equal(expected);
          const mask = new Uint32Array((ROWS >>> 5) + 2).map(() => (rng() * 0x100000000) >>> 0);
          expect(postings.countIn(id, mask)).to.equal(expected.filter((row) => (mask[row >>> 5] >>> (row & 31)) & 1).length);
        }
      };
      for (let round = 0; round < 6; round++) {
        for (let i = 0; i < 60_000; i++) {
          const id = randomInt(rng, IDS);
          const rows = reference.get(id)!;
          const row = randomInt(rng, ROWS);
          const r = rng();
          if (rows.size < target(id) && !rows.has(row) && r < 0.6) {
            postings.add(id, row, ROWS);
            rows.add(row);
          } else if (rows.size > 0 && r < 0.85) {
            const gone = [...rows][randomInt(rng, rows.size)];
            postings.remove(id, gone, ROWS);
            rows.delete(gone);
          } else if (rows.size > 0 && !rows.has(row)) {
            const from = [...rows][randomInt(rng, rows.size)];
            postings.move(id, from, row, ROWS);
            rows.delete(from);
            rows.add(row);
          }
        }
        check();
      }
      // The slab spans pages (64 Ki words each).
      expect((postings as unknown as { slabPages: Uint32Array[] }).slabPages.length).to.be.above(2);
    });
});
