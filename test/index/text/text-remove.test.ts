// Removing texts (delete-many, replace, replace without a text) walks each
// document's stored term ids instead of analysing its text again: keyword
// answers, N and the dictionary must stay those of a reference rebuilt from
// the texts left, in several scripts and under both analyzers; and deleting
// texts must cost far less than analysing them.
import { expect } from 'chai';
import { ANALYZERS, type AnalyzerName } from '../../../src/config.js';
import { analyze, termBytes } from '../../../src/index/text/analyzer.js';
import { TextIndex } from '../../../src/index/text/text-index.js';
import { VectorIndex } from '../../../src/index/vector-index.js';
import { loadKernelModule } from '../../../src/kernel/load-node.js';
import { expectSameRanking, referenceBm25, type TextDoc } from '../../helpers/bm25-reference.js';
import { randomInt, seededRng, type Rng } from '../../helpers/random.js';
import { scaled } from '../../helpers/scale.js';

const SCRIPTS: Record<string, string> = {
  latin: 'abcdefghijklmnopqrstuvwxyzABCXYZéèçñüß',
  cyrillic: 'абвгдежзийклмнопрстуфхцчшщъыьэюяЁЖЩ',
  greek: 'αβγδεζηθικλμνξοπρστυφχψω',
  cjk: '東京都大阪府日本語漢字学生',
  kana: 'ひらがなカタカナ',
  hangul: '한국어문장',
  thai: 'ภาษาไทย',
  emoji: '😀👍🏽🇫🇷',
};
const SEPARATORS = [' ', ' ', ', ', '. ', '-', "'", '\n', '! '];
const BM25 = { k1: 1.2, b: 0.75 };

/** A small vocabulary of `alphabet`'s words (so terms repeat across and within texts), and English stop words. */
function vocabulary(rng: Rng, alphabet: string): string[] {
  const letters = Array.from(alphabet);
  const words = Array.from({ length: 16 }, () => Array.from({ length: 1 + randomInt(rng, 6) }, () => letters[randomInt(rng, letters.length)]).join(''));
  return [...words, 'the', 'and', 'running', 'runs'];
}

function randomText(rng: Rng, words: string[]): string {
  let text = '';
  for (let n = randomInt(rng, 25); n > 0; n--) text += words[randomInt(rng, words.length)] + SEPARATORS[randomInt(rng, SEPARATORS.length)];
  return text;
}

/** Distinct terms of the texts, as the reference counts them. */
const distinctTerms = (docs: Iterable<TextDoc>, analyzer: AnalyzerName) => new Set([...docs].flatMap((d) => analyze(analyzer, d.text))).size;

describe('removing texts', () => {
  for (const [script, alphabet] of Object.entries({ ...SCRIPTS, mixed: Object.values(SCRIPTS).join('') })) {
    for (const analyzer of ANALYZERS) {
      it(`keeps keyword answers, N and the terms equal to a reference rebuilt from the texts left (${script}, ${analyzer})`, () => {
        for (let run = 0; run < scaled(2); run++) {
          const rng = seededRng(7000 + run * 31 + script.length * 7 + analyzer.length);
          const words = vocabulary(rng, alphabet);
          const index = new VectorIndex(loadKernelModule(), 1000);
          const docs = new Map<string, TextDoc>();
          const ids = Array.from({ length: 14 }, (_, i) => `id${i}`);
          let seq = 0;
          for (let step = 0; step < 50; step++) {
            const roll = rng();
            let op: string;
            if (roll < 0.55) {
              op = 'add-many';
              const records = Array.from({ length: 1 + randomInt(rng, 6) }, () => ({
                id: ids[randomInt(rng, ids.length)],
                vector: [1, randomInt(rng, 5)],
                text: rng() < 0.85 ? randomText(rng, words) : undefined,
              }));
              index.upsert(records, { analyzer });
              for (const { id, text } of records) {
                docs.delete(id);
                if (text !== undefined) docs.set(id, { id, text, seq });
                seq++;
              }
            } else {
              op = 'delete-many';
              const gone = ids.filter(() => rng() < 0.35);
              index.delete(gone);
              for (const id of gone) docs.delete(id);
            }
            const label = `run ${run} step ${step} ${op}`;
            expect(index.stats().text.terms, label).to.equal(distinctTerms(docs.values(), analyzer));
            expect(index.stats().text.documents, label).to.equal([...docs.values()].filter((d) => analyze(analyzer, d.text).length > 0).length);
            for (let q = 0; q < 3; q++) {
              const query = Array.from({ length: 1 + randomInt(rng, 2) }, () => words[randomInt(rng, words.length)]).join(' ');
              if (analyze(analyzer, query).length === 0) continue;
              const out = index.search(null, { queryTexts: [query], topK: 100 });
              expectSameRanking(out.results[0], referenceBm25([...docs.values()], analyzer, query), `${label} "${query}"`);
            }
          }
        }
      });
    }
  }

  it('the inverted index alone, removing batches of documents between compactions, matches the reference in every script', () => {
    for (const [script, alphabet] of Object.entries(SCRIPTS)) {
      const rng = seededRng(8000 + script.length);
      const words = vocabulary(rng, alphabet);
      const index = new TextIndex(0);
      // Rows as a VectorIndex keeps them: dense, a delete moves the last row into the hole.
      const rows: TextDoc[] = [];
      let seq = 0;
      for (let step = 0; step < 120; step++) {
        if (rng() < 0.6 || rows.length === 0) {
          for (let n = 1 + randomInt(rng, 4); n > 0; n--) {
            const doc = { id: `r${seq}`, text: randomText(rng, words), seq: seq++ };
            rows.push(doc);
            index.add(rows.length - 1, termBytes('standard', doc.text), doc.seq);
          }
        } else {
          for (let n = 1 + randomInt(rng, 4); n > 0 && rows.length > 0; n--) {
            const row = randomInt(rng, rows.length),
              last = rows.length - 1;
            index.remove(row);
            if (row !== last) {
              index.move(last, row);
              rows[row] = rows[last];
            }
            rows.pop();
          }
        }
        index.afterChange(rows.length);
        expect(index.termCount, `${script} step ${step}`).to.equal(distinctTerms(rows, 'standard'));
        const query = words[randomInt(rng, words.length)];
        const terms = [...new Set(analyze('standard', query))];
        const found = index.search(terms, rows.length, 1000, BM25, null);
        const actual = [...found.rows].map((row, i) => ({ id: rows[row].id, score: found.scores[i] }));
        expectSameRanking(actual, referenceBm25(rows, 'standard', query), `${script} step ${step} "${query}"`);
      }
    }
  });

  it('deletes texts in far less time than analysing them takes', () => {
    const rng = seededRng(9);
    const words = vocabulary(rng, SCRIPTS.cyrillic);
    // 40 texts of about 16 KiB of Cyrillic: analysing one takes milliseconds.
    const texts = Array.from({ length: 40 }, () => {
      let text = '';
      while (text.length < 8000) text += words[randomInt(rng, 16)] + ' ';
      return text;
    });
    const cpuMs = (run: () => void) => {
      const start = process.cpuUsage();
      run();
      const used = process.cpuUsage(start);
      return (used.user + used.system) / 1000;
    };
    const analysis = cpuMs(() => {
      for (const text of texts) termBytes('standard', text);
    });
    const index = new VectorIndex(loadKernelModule(), 1000);
    index.upsert(texts.map((text, i) => ({ id: `t${i}`, vector: [1, 2], text })));
    // Every other one, so the store is not simply emptied.
    const deleting = cpuMs(() => index.delete(texts.map((_, i) => `t${i}`).filter((_, i) => i % 2 === 0)));
    expect(index.stats().text.documents).to.equal(20);
    // Analysing the deleted texts again (as drops once did) would take half of `analysis`.
    expect(deleting, `analysis ${analysis} ms`).to.be.below(analysis / 10);
  });
});
