// Query texts analysed before the search turn, in slices (queryTermsAhead):
// the terms are each text's distinct analysed terms (a plain reference:
// a Set of analyze's tokens) for random texts in several scripts under both
// analyzers; a search given them answers as one that analyses in its turn;
// a stale analysis (the analyzer changed meanwhile) is not used; and the
// analysis gives the event loop back between texts.
import { expect } from 'chai';
import { ANALYZERS } from '../../src/config.js';
import { analyze } from '../../src/index/text/analyzer.js';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { queryTermsAhead } from '../../src/sessions/query-terms-ahead.js';
import { randomInt, seededRng, type Rng } from '../helpers/random.js';

const newIndex = () => new VectorIndex(loadKernelModule(), 10_000);

/** Code points of several scripts, ASCII punctuation and spaces, emoji and combining marks. */
const ALPHABETS = [
  'abcdefghijklmnopqrstuvwxyzABCXYZ',
  'абвгдежзийклмнопрстуфхцчшщъыьэюяЁЖЩ',
  '東京都大阪府日本語漢字学生',
  'ひらがなカタカナ',
  '한국어문장',
  'ภาษาไทย',
  'αβγδεζηθ',
  'éèçñüß’\u0301',
  '😀👍🏽🇫🇷',
];
const SEPARATORS = [' ', ' ', ', ', '. ', '-', "'", ':', '\n', '_', '3.14 '];

function randomScriptText(rng: Rng, maxWords: number): string {
  const n = randomInt(rng, maxWords + 1);
  let text = '';
  for (let w = 0; w < n; w++) {
    const alphabet = Array.from(ALPHABETS[randomInt(rng, ALPHABETS.length)]);
    const length = 1 + randomInt(rng, 9);
    for (let i = 0; i < length; i++) text += alphabet[randomInt(rng, alphabet.length)];
    text += SEPARATORS[randomInt(rng, SEPARATORS.length)];
  }
  return text;
}

describe('query texts analysed ahead of the search turn', () => {
  it('gives each text its distinct analysed terms, in every script, under both analyzers', async () => {
    const rng = seededRng(33);
    for (const analyzer of ANALYZERS) {
      const index = newIndex();
      index.upsert([{ id: 'a', vector: [1, 2], text: 'x' }], { analyzer });
      const texts = Array.from({ length: 200 }, () => randomScriptText(rng, 40));
      const ahead = await queryTermsAhead({ index, tokenHash: '' }, texts, 0);
      expect(ahead.analyzer).to.equal(analyzer);
      expect(ahead.terms).to.deep.equal(texts.map((text) => [...new Set(analyze(analyzer, text))]));
    }
  });

  it('answers a search as the one-step analysis in the turn does', async () => {
    const rng = seededRng(7);
    for (const analyzer of ANALYZERS) {
      const index = newIndex();
      const records = Array.from({ length: 300 }, (_, i) => ({ id: `r${i}`, vector: [1, i % 5, 2], text: randomScriptText(rng, 30) }));
      index.upsert(records, { analyzer });
      const texts = Array.from({ length: 64 }, () => `${randomScriptText(rng, 6)} ${records[randomInt(rng, records.length)].text!.slice(0, 20)} zz`);
      const queryTerms = await queryTermsAhead({ index, tokenHash: '' }, texts, 0);
      const oneStep = index.search(null, { queryTexts: texts, topK: 10 });
      const sliced = index.search(null, { queryTexts: texts, queryTerms, topK: 10 });
      expect(sliced).to.deep.equal(oneStep);
      expect(oneStep.results.some((list) => list.length > 0)).to.equal(true);
    }
  });

  it('is not used once the analyzer changed before the turn', async () => {
    const index = newIndex();
    const queryTerms = await queryTermsAhead({ index, tokenHash: '' }, ['running dogs'], 0);
    expect(queryTerms.analyzer).to.equal('standard');
    index.upsert([{ id: 'e', vector: [1, 1], text: 'the dog runs' }], { analyzer: 'english' });
    const hits = index.search(null, { queryTexts: ['running dogs'], queryTerms, topK: 5 }).results[0];
    expect(hits.map((hit) => hit.id)).to.deep.equal(['e']);
  });

  it('gives the event loop back between texts', async () => {
    // Turns of the event loop counted by a chain of setImmediate (no timer: a loaded machine cannot skew it).
    let turns = 0;
    let counting = true;
    const count = () => {
      if (!counting) return;
      turns++;
      setImmediate(count);
    };
    setImmediate(count);
    try {
      await queryTermsAhead(
        { index: newIndex(), tokenHash: '' },
        Array.from({ length: 64 }, (_, i) => `word${i} `.repeat(400)),
        0,
      );
    } finally {
      counting = false;
    }
    expect(turns).to.be.above(32);
  });
});
