// A long text analysed in pieces (termBytesSteps, as an upsert's texts are
// analysed ahead of its turn) gives exactly the terms of the whole text in
// one step, under both analyzers, on random long texts mixing scripts with
// the characters whose analysis depends on a neighbour (combining marks
// after whitespace, a final sigma, no-break and other Unicode spaces, ZWJ
// emoji, colons, apostrophes); and a long text takes several pieces.
import { expect } from 'chai';
import { ANALYZERS } from '../../../src/config.js';
import { ANALYSIS_PIECE_CHARS, termBytes, termBytesSteps } from '../../../src/index/text/analyzer.js';
import { randomInt, seededRng } from '../../helpers/random.js';

const ATOMS = [
  'abc',
  'Running',
  "don't",
  'U.S.A',
  '3.14',
  'ΣΟΦΟΣ',
  'σοφός',
  'Όσος',
  'Ёлка',
  'йод',
  'Straße',
  'İstanbul',
  '東京都',
  'ひらがな',
  '한국어',
  'ภาษาไทย',
  '😀',
  '👍🏽',
  '👨‍👩‍👧',
  '🇫🇷',
  'e\u0301',
  '\u0301',
  '\u0308a',
  'ﬁne',
  'ＡＢＣ',
  ':',
  "'",
  '-',
  '.',
  ',',
  '\u00a0',
  '\u2003',
  '\u3000',
  '\u2019',
  '\ufe0f',
  '_',
  'x'.repeat(300),
];
const SPACES = [' ', ' ', ' ', '\n', '\t', '\r\n', '  ', ''];

function randomLongText(rng: () => number, chars: number): string {
  let text = '';
  while (text.length < chars) text += ATOMS[randomInt(rng, ATOMS.length)] + SPACES[randomInt(rng, SPACES.length)];
  return text;
}

/** termBytesSteps run to its end: its terms, and the pauses it took. */
function inPieces(analyzer: (typeof ANALYZERS)[number], text: string): { bytes: number[]; count: number; pauses: number } {
  const steps = termBytesSteps(analyzer, text);
  let pauses = 0;
  let step = steps.next();
  for (; !step.done; step = steps.next()) pauses++;
  return { bytes: [...step.value.bytes], count: step.value.count, pauses };
}

describe('analysis in pieces', () => {
  for (const analyzer of ANALYZERS) {
    it(`gives the whole text's terms, byte for byte (${analyzer})`, () => {
      const rng = seededRng(analyzer.length * 17);
      for (let run = 0; run < 12; run++) {
        const text = randomLongText(rng, ANALYSIS_PIECE_CHARS * (1 + randomInt(rng, 8)));
        const whole = termBytes(analyzer, text);
        const pieces = inPieces(analyzer, text);
        expect(pieces.count, `run ${run}`).to.equal(whole.count);
        expect(pieces.bytes, `run ${run}`).to.deep.equal([...whole.bytes]);
        expect(pieces.pauses, `run ${run}`).to.be.at.least(Math.floor(text.length / ANALYSIS_PIECE_CHARS) - 1);
      }
    });
  }

  it('takes a short or an ASCII text in one piece', () => {
    expect(inPieces('standard', 'Ёлка '.repeat(100)).pauses).to.equal(0);
    expect(inPieces('standard', 'plain ascii words '.repeat(2000)).pauses).to.equal(0);
  });
});
