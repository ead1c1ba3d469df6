// RowTable against a plain reference (an array of ids in row order, with the
// last id moved into a removed row): random adds, rewrites, removes and
// clears; every id's row, every row's id, the move a removal reports, and the
// insertion order's seqs agree after each step.
import { expect } from 'chai';
import { RowTable } from '../../src/index/row-table.js';
import { randomInt, seededRng } from '../helpers/random.js';

describe('RowTable', () => {
  it('keeps rows contiguous and reports the move of each removal, like a plain array with swap-remove', () => {
    for (let seed = 1; seed <= 5; seed++) {
      const rng = seededRng(700 + seed);
      const table = new RowTable();
      let ids: string[] = [];
      const seqOf = new Map<string, number>();
      let seq = 0;
      for (let step = 0; step < 2000; step++) {
        const roll = rng();
        const id = `v${randomInt(rng, 60)}`;
        const row = ids.indexOf(id);
        if (roll < 0.55) {
          if (row < 0) {
            expect(table.add(id, seq)).to.equal(ids.length);
            ids.push(id);
          } else {
            table.rewrite(row, seq);
          }
          seqOf.set(id, seq);
          table.advance(1);
          seq++;
        } else if (roll < 0.98) {
          if (row < 0) continue;
          const last = ids.length - 1;
          expect(table.remove(row)).to.deep.equal({ row, last });
          ids[row] = ids[last];
          ids.pop();
          seqOf.delete(id);
        } else {
          table.clear();
          ids = [];
          seqOf.clear();
        }
        expect(table.size).to.equal(ids.length);
        expect(table.nextSeq).to.equal(seq);
        ids.forEach((stored, r) => {
          expect(table.idAt(r)).to.equal(stored);
          expect(table.rowOf(stored)).to.equal(r);
          expect(table.order.seqOf(stored)).to.equal(seqOf.get(stored));
        });
        expect(table.rowOf(id)).to.equal(ids.includes(id) ? ids.indexOf(id) : undefined);
      }
    }
  });

  it('counts no heap once every row is removed', () => {
    const table = new RowTable();
    for (let i = 0; i < 10; i++) table.add(`id-${i}`, i);
    expect(table.heapBytes).to.be.greaterThan(0);
    for (let i = 9; i >= 0; i--) table.remove(i);
    table.clear();
    expect(table.heapBytes).to.equal(0);
  });
});
