// docs/performance.md (and performance-robustness.md) show the benches' latest
// results: each generated table equals the one rendered from bench/results/,
// every bench has one, and the page stays short (the history is apart).
import { expect } from 'chai';
import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { tableIn } from '../../scripts/doc-tables.js';
import { RESULTS_DOCS, resultsTables } from '../../scripts/results-tables.js';

const BENCH_DIR = fileURLToPath(new URL('../../bench/', import.meta.url));
const benches = readdirSync(BENCH_DIR)
  .filter((f) => f.endsWith('.bench.ts'))
  .map((f) => f.replace('.bench.ts', ''));

describe('docs/performance.md', () => {
  it('every generated table equals the one rendered from bench/results/ (npm run docs)', () => {
    for (const path of RESULTS_DOCS) {
      const text = readFileSync(path, 'utf8');
      for (const [name, render] of Object.entries(resultsTables(path))) expect(tableIn(text, name), `${name}: run npm run docs`).to.equal(render());
    }
  });

  it('has a results table for every bench, and none for a bench that does not exist', () => {
    const named = RESULTS_DOCS.flatMap((path) => Object.keys(resultsTables(path)).map((name) => name.replace(/^results:/, '').split('/')[0]));
    expect(benches.length).to.be.greaterThan(10);
    expect(benches.filter((b) => !named.includes(b))).to.deep.equal([]);
    for (const bench of named) expect(benches, `${bench}: no bench/${bench}.bench.ts`).to.include(bench);
  });

  it("has at most 390 lines: today's figures and the goals, the history apart", () => {
    expect(readFileSync(RESULTS_DOCS[0], 'utf8').split('\n').length).to.be.at.most(390);
  });
});
