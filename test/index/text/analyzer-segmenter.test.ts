// The analyzer's fast path (analyzer.ts isSimpleWord): a run of Latin, Greek
// and Cyrillic letters and digits is one word without Intl.Segmenter. Checked
// against the segmenter itself for every pair of such code points: UAX #29's
// word rules for letters (ALetter) and digits (Numeric) next to each other
// look at the pair alone, so a run the fast path takes is one word for it.
// And a word of one pictograph (isLonePictograph) is kept as the segmenter
// keeps it, checked for every code point the fast path takes.
import { expect } from 'chai';
import { bySegmenter, isLonePictograph, isSimpleWord } from '../../../src/index/text/analyzer.js';

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

  it('a pictograph alone is the one word the segmenter makes of it, for every such code point', () => {
    let checked = 0;
    for (let c = 0; c <= 0x10ffff; c++) {
      if (c >= 0xd800 && c < 0xe000) continue;
      const ch = String.fromCodePoint(c);
      if (!isLonePictograph(ch)) continue;
      const words: string[] = [];
      bySegmenter(ch, words);
      expect(words, `U+${c.toString(16)}`).to.deep.equal([ch]);
      checked++;
    }
    expect(checked).to.be.greaterThan(2800);
  });
});
