// The analyzer's fast path (analyzer.ts isSimpleWord): a run of Latin, Greek
// and Cyrillic letters and digits is one word without Intl.Segmenter. Checked
// against the segmenter itself for every pair of such code points: UAX #29's
// word rules for letters (ALetter) and digits (Numeric) next to each other
// look at the pair alone, so a run the fast path takes is one word for it.
import { expect } from 'chai';
import { isSimpleWord } from '../../../src/index/text/analyzer.js';

const simple: string[] = [];
for (let c = 0; c < 0x0530; c++) {
  const ch = String.fromCodePoint(c);
  if (isSimpleWord(ch)) simple.push(ch);
}
const segmenter = new Intl.Segmenter('und', { granularity: 'word' });

describe('analyzer: runs of Latin, Greek and Cyrillic letters and digits', () => {
  it('are one word-like segment for the segmenter, for every pair of their code points', () => {
    expect(simple.length).to.be.greaterThan(700);
    for (const a of simple) {
      // b1 a b2 a b3 ...: every pair (b, a) and (a, b) side by side.
      const text = simple.map((b) => b + a).join('');
      const segments = [...segmenter.segment(text)];
      expect(
        segments.map((s) => [s.segment.length, s.isWordLike]),
        `pairs with U+${a.codePointAt(0)!.toString(16)}`,
      ).to.deep.equal([[text.length, true]]);
    }
  });
});
