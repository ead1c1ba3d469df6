// Model-based tests: random writes (add, replace, an import-like batch,
// delete, clear, reset) against a reference rebuilt from scratch after every
// step; keyword results and scores must be identical. The inverted index
// alone is driven too, with compaction after every change.
import { expect } from 'chai';
import type { AnalyzerName } from '../../../src/config.js';
import { analyze, termBytes } from '../../../src/index/text/analyzer.js';
import { TextIndex } from '../../../src/index/text/text-index.js';
import { VectorIndex } from '../../../src/index/vector-index.js';
import { loadKernelModule } from '../../../src/kernel/load-node.js';
import { expectSameRanking, referenceBm25, type TextDoc } from '../../helpers/bm25-reference.js';
import { randomInt, seededRng, type Rng } from '../../helpers/random.js';
import { scaled } from '../../helpers/scale.js';
import { randomQuery, randomText, smallVector } from './corpus.js';

const IDS = ['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h', '__proto__'];
const BM25 = { k1: 1.2, b: 0.75 };

describe('text index model', () => {
  it('every write keeps keyword search equal to a reference rebuilt from scratch', () => {
    for (let run = 0; run < scaled(12); run++) {
      const rng = seededRng(1000 + run);
      const index = new VectorIndex(loadKernelModule(), 1000);
      let analyzer: AnalyzerName | null = null;
      const docs = new Map<string, TextDoc>();
      let seq = 0;
      const write = (records: { id: string; text?: string }[], wanted: AnalyzerName) => {
        index.upsert(
          records.map(({ id, text }) => ({ id, vector: smallVector(rng, 2).map((x) => x + 10), text })),
          { analyzer: wanted },
        );
        for (const { id, text } of records) {
          docs.delete(id);
          if (text !== undefined) docs.set(id, { id, text, seq });
          seq++;
        }
        // Named on every write: the first write fixes it, text or not.
        analyzer ??= wanted;
      };
      for (let step = 0; step < 60; step++) {
        const roll = rng();
        const wanted: AnalyzerName = analyzer ?? (rng() < 0.5 ? 'english' : 'standard');
        const record = () => ({ id: IDS[randomInt(rng, IDS.length)], text: rng() < 0.85 ? randomText(rng, 12) : undefined });
        let op: string;
        if (roll < 0.45) {
          op = 'add';
          write([record()], wanted);
        } else if (roll < 0.6) {
          op = 'import';
          write(Array.from({ length: 1 + randomInt(rng, 8) }, record), wanted);
        } else if (roll < 0.85) {
          op = 'delete';
          const ids = IDS.filter(() => rng() < 0.3);
          index.delete(ids);
          for (const id of ids) docs.delete(id);
        } else if (roll < 0.93) {
          op = 'clear';
          index.clear();
          docs.clear();
        } else {
          op = 'reset';
          index.reset();
          docs.clear();
          analyzer = null;
        }
        expect(index.getConfig().analyzer, `run ${run} step ${step} ${op}`).to.equal(analyzer);
        const list = [...docs.values()];
        for (let q = 0; q < 3; q++) {
          const query = randomQuery(rng);
          const used = analyzer ?? 'standard';
          if (analyze(used, query).length === 0) continue;
          const out = index.search(null, { queryTexts: [query], topK: 100 });
          expectSameRanking(out.results[0], referenceBm25(list, used, query), `run ${run} step ${step} ${op} "${query}"`);
        }
        expect(index.stats().text.documents).to.equal(list.filter((d) => analyze(analyzer ?? 'standard', d.text).length > 0).length);
        if (docs.size === 0) expect(index.stats().text.terms).to.equal(0);
      }
    }
  });

  it('the inverted index alone, compacting after every change, matches the reference', () => {
    for (let run = 0; run < scaled(8); run++) {
      const rng: Rng = seededRng(2000 + run);
      const index = new TextIndex(0);
      // Rows as a VectorIndex keeps them: dense, a delete moves the last row into the hole.
      const rows: TextDoc[] = [];
      let seq = 0;
      for (let step = 0; step < 150; step++) {
        if (rng() < 0.6 || rows.length === 0) {
          const doc = { id: `r${seq}`, text: randomText(rng, 10), seq: seq++ };
          const row = rows.length;
          rows.push(doc);
          index.add(row, termBytes('standard', doc.text), doc.seq);
        } else {
          const row = randomInt(rng, rows.length),
            last = rows.length - 1;
          index.remove(row);
          if (row !== last) {
            index.move(last, row);
            rows[row] = rows[last];
          }
          rows.pop();
        }
        index.afterChange(rows.length);
        const query = randomQuery(rng);
        const terms = [...new Set(analyze('standard', query))];
        const found = index.search(terms, rows.length, 1000, BM25, null);
        const actual = [...found.rows].map((row, i) => ({ id: rows[row].id, score: found.scores[i] }));
        const expected = referenceBm25(rows, 'standard', query);
        expectSameRanking(actual, expected, `run ${run} step ${step} "${query}"`);
        expect(found.matched).to.equal(expected.length);
      }
    }
  });
});
