// The analyzers' tokens: CJK bigrams, combining marks, emoji, mixed scripts,
// hyphens, apostrophes, numbers; English stop words and Porter2 stems; and
// the ASCII fast path (with the split at whitespace) proven equal to the
// Intl.Segmenter path on random text.
import { expect } from 'chai';
import { analyze, asciiWords, MAX_TOKEN_CHARS, segmenterWords, termBytes } from '../../../src/index/text/analyzer.js';
import { randomInt, seededRng } from '../../helpers/random.js';

const standard = (text: string) => analyze('standard', text);
const english = (text: string) => analyze('english', text);

describe('analyzers', () => {
  describe('standard', () => {
    it('lower-cases, applies NFKC and folds diacritics', () => {
      expect(standard('Été CAFÉ naïve Ünïcödé')).to.deep.equal(['ete', 'cafe', 'naive', 'unicode']);
      // Combining marks written apart fold the same as precomposed letters.
      expect(standard('cafe\u0301 e\u0301te\u0301')).to.deep.equal(['cafe', 'ete']);
      expect(standard('ｆｕｌｌ ＡＢＣ １２３ ﬁne')).to.deep.equal(['full', 'abc', '123', 'fine']);
      expect(standard('İstanbul Straße ΆΈΉ Йод')).to.deep.equal(['istanbul', 'straße', 'αεη', 'иод']);
    });

    it('splits hyphens, keeps apostrophes and dots inside words, numbers whole', () => {
      expect(standard('wi-fi e-mail state-of-the-art')).to.deep.equal(['wi', 'fi', 'e', 'mail', 'state', 'of', 'the', 'art']);
      expect(standard("Don't O\u2019Neil's rock'n'roll 'quoted'")).to.deep.equal(["don't", "o'neil's", "rock'n'roll", 'quoted']);
      expect(standard('U.S.A. 3.14 1,000 1.000,5 v2.0 10% $5 AT&T c++')).to.deep.equal([
        'u.s.a',
        '3.14',
        '1,000',
        '1.000,5',
        'v2.0',
        '10',
        '5',
        'at',
        't',
        'c',
      ]);
      expect(standard('snake_case __ _x a:b 12:30')).to.deep.equal(['snake_case', '_x', 'a', 'b', '12', '30']);
    });

    it('bigrams Han, Kana, Hangul and Southeast Asian runs; a lone character is a unigram', () => {
      expect(standard('東京都')).to.deep.equal(['東京', '京都']);
      expect(standard('私はカタカナ')).to.deep.equal(['私は', 'はカ', 'カタ', 'タカ', 'カナ']);
      expect(standard('한국어 문')).to.deep.equal(['한국', '국어', '문']);
      expect(standard('ภาษาไทย')).to.deep.equal(['ภา', 'าษ', 'ษา', 'าไ', 'ไท', 'ทย']);
      expect(standard('中')).to.deep.equal(['中']);
    });

    it('separates mixed scripts and keeps emoji as tokens', () => {
      expect(standard('abc東京def Москва2024')).to.deep.equal(['abc', '東京', 'def', 'москва2024']);
      expect(standard('I ❤️ 🚀! 👍🏽 🇫🇷 👨‍👩‍👧')).to.deep.equal(['i', '❤', '🚀', '👍🏽', '🇫🇷', '👨‍👩‍👧']);
    });

    it('cuts a token longer than 255 code units into pieces', () => {
      const long = 'a'.repeat(2 * MAX_TOKEN_CHARS + 3);
      expect(standard(long).map((t) => t.length)).to.deep.equal([MAX_TOKEN_CHARS, MAX_TOKEN_CHARS, 3]);
    });

    it('finds nothing in punctuation, spaces and empty text', () => {
      expect(standard('')).to.deep.equal([]);
      expect(standard(' ... -- !? \n')).to.deep.equal([]);
    });
  });

  describe('english', () => {
    it("drops Lucene's stop words and possessives, stems with Porter2", () => {
      expect(english('The dogs are running to the generously sized caresses of it')).to.deep.equal(['dog', 'run', 'generous', 'size', 'caress']);
      expect(english("John's cars' wheels")).to.deep.equal(['john', 'car', 'wheel']);
      expect(english('the and of a')).to.deep.equal([]);
      // Numbers, non-ASCII words and CJK are not stemmed.
      expect(english('3.14 running Straße 東京')).to.deep.equal(['3.14', 'run', 'straße', '東京']);
    });
  });

  it('the ASCII fast path equals the segmenter on random ASCII text', () => {
    const rng = seededRng(7);
    const alphabet = 'ab1_.,;\'-!: \n"Z9&';
    for (let k = 0; k < 20_000; k++) {
      let text = '';
      for (let i = 1 + randomInt(rng, 14); i > 0; i--) text += alphabet[randomInt(rng, alphabet.length)];
      expect(asciiWords(text.toLowerCase().replace(/:/g, ' ')), JSON.stringify(text)).to.deep.equal(segmenterWords(text));
    }
  });

  it('the whole pipeline (whitespace split, fast path) equals the segmenter on random mixed text', () => {
    const rng = seededRng(8);
    const pieces = [
      'a',
      'B',
      '1',
      '_',
      '.',
      ',',
      "'",
      '-',
      ' ',
      '\n',
      'é',
      'e\u0301',
      '東',
      '京',
      'カ',
      '한',
      'ไ',
      '🚀',
      '👍🏽',
      'ß',
      'Я',
      '\u2019',
      ':',
      '\u00ad',
    ];
    for (let k = 0; k < 5_000; k++) {
      let text = '';
      for (let i = 1 + randomInt(rng, 12); i > 0; i--) text += pieces[randomInt(rng, pieces.length)];
      expect(standard(text), JSON.stringify(text)).to.deep.equal(segmenterWords(text));
    }
  });

  it("termBytes (what the index reads) is analyze's terms as UTF-8 joined by newlines", () => {
    const rng = seededRng(9);
    const pieces = ['Ab', '1', '_', '.', '-', ' ', 'é', '東京', '🚀', "'s", 'the ', 'running ', 'x'.repeat(300), 'é'.repeat(260)];
    const ascii = ['Ab', 'IS', '1', '_', '.', "'", '-', ' ', "'s", 'the ', 'running ', 'caresses ', 'x'.repeat(300)];
    for (let k = 0; k < 4_000; k++) {
      const from = k % 2 === 0 ? pieces : ascii;
      let text = '';
      for (let i = 1 + randomInt(rng, 10); i > 0; i--) text += from[randomInt(rng, from.length)];
      for (const name of ['standard', 'english'] as const) {
        const terms = analyze(name, text);
        const bytes = termBytes(name, text);
        expect(new TextDecoder().decode(bytes.bytes), `${name} ${JSON.stringify(text)}`).to.equal(terms.join('\n'));
        expect(bytes.count).to.equal(terms.length);
      }
    }
  });
});
