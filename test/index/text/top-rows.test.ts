// topRows: the best k of the touched rows, compared with a plain sort of
// them all on random scores (many ties, so the seq order is exercised).
import { expect } from 'chai';
import { topRows } from '../../../src/index/text/top-rows.js';
import { randomInt, seededRng } from '../../helpers/random.js';

describe('topRows', () => {
  it('keeps the best k above the threshold, ties by the earlier write, as a full sort does', () => {
    const rng = seededRng(11);
    for (let round = 0; round < 300; round++) {
      const rowCount = 1 + randomInt(rng, 200);
      const scores = new Float64Array(rowCount),
        touched = new Int32Array(rowCount);
      // Row r's document is a random permutation's, its seq another's: ties are decided through both arrays.
      const docOfRow = Int32Array.from({ length: rowCount }, (_, r) => r).sort(() => rng() - 0.5);
      const seqOf = Float64Array.from({ length: rowCount }, () => randomInt(rng, 1000));
      let matched = 0;
      for (let row = 0; row < rowCount; row++) {
        if (rng() < 0.3) continue;
        scores[row] = 1 + randomInt(rng, 8);
        touched[matched++] = row;
      }
      const k = 1 + randomInt(rng, 20),
        threshold = rng() < 0.5 ? -Infinity : 1 + randomInt(rng, 8);
      const expected = [...touched.subarray(0, matched)]
        .filter((row) => scores[row] >= threshold)
        .sort((a, b) => scores[b] - scores[a] || seqOf[docOfRow[a]] - seqOf[docOfRow[b]])
        .slice(0, k);
      const got = topRows(scores, touched, matched, k, threshold, seqOf, docOfRow);
      // Rows of equal score and equal seq may come in either order: compare (score, seq) pairs.
      const key = (row: number) => `${scores[row]}/${seqOf[docOfRow[row]]}`;
      expect([...got.rows].map(key)).to.deep.equal(expected.map(key));
      expect([...got.scores]).to.deep.equal(expected.map((row) => scores[row]));
    }
  });
});
