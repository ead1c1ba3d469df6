// npm run bench:experiment -- text-index [--quick]: the keyword index alone
// (src/index/text), on 50k English-like documents of about 150 words (a
// Zipf-distributed vocabulary of 30k made-up words plus common English ones,
// so terms repeat as in prose), with 8-d vectors so the vector side costs
// little (--dim 384 for the issue's). Prints:
//   - the text store's bytes (postings, dictionary, per-document arrays) over
//     the text's UTF-8 bytes;
//   - a 3-term keyword query's time (p50, p99) over 300 queries of words of
//     mixed frequency, standard and english; a vector query's (topK 10) and
//     a hybrid one's (candidatePool 100, rrf), on this thread;
//   - the fill: 50k added in batches of 1000 with `text`, against the same
//     text as a metadata value, alternating, in one process.
// The lead's bench:text measures the same goals end to end (384-d, HTTP).
// Run with node --expose-gc to collect before each fill.
import { performance } from 'node:perf_hooks';
import { rng } from '../lib/data.js';
import { fmt, median, printTable, quick } from '../lib/measure.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import type { VectorInput } from '../../src/index/types.js';
import { VectorIndex } from '../../src/index/vector-index.js';
import type { AnalyzerName } from '../../src/config.js';

const DOCS = quick ? 10_000 : 50_000;
const WORDS_PER_DOC = 150;
const DIM = Number(process.argv[process.argv.indexOf('--dim') + 1]) || 8;
const COMMON = (
  'the of and to in is was he for it with as his on be at by had are but from or have an they which one you were her all she there would ' +
  'their we him been has when who will more no if out so said what up its about into than them can only other new some could time these two may then ' +
  'do first any my now such like our over man me even most made after also did many before must through back years where much your way well down should'
).split(' ');

function vocabulary(next: () => number, size: number): string[] {
  const syllables = ['ka', 'to', 'ri', 'men', 'sa', 'lo', 'ver', 'an', 'tis', 'po', 'du', 'gra', 'el', 'mi', 'nor', 'que', 'bel', 'st', 'on', 'ix'];
  const words = new Set<string>();
  while (words.size < size) {
    let word = '';
    for (let n = 1 + Math.floor(next() * 3); n > 0; n--) word += syllables[Math.floor(next() * syllables.length)];
    if (next() < 0.2) word += ['ing', 'ed', 's', 'ly', 'tion'][Math.floor(next() * 5)];
    words.add(word);
  }
  return [...words];
}

/** Zipf (s = 1) over `words`: rank r drawn with weight 1 / r. */
function zipf(next: () => number, words: string[]): () => string {
  const cumulative = new Float64Array(words.length);
  let sum = 0;
  for (let r = 0; r < words.length; r++) cumulative[r] = sum += 1 / (r + 1);
  return () => {
    const x = next() * sum;
    let lo = 0,
      hi = words.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (cumulative[mid] < x) lo = mid + 1;
      else hi = mid;
    }
    return words[lo];
  };
}

const next = rng(42);
const words = [...COMMON, ...vocabulary(next, 30_000)];
const word = zipf(next, words);
const texts = Array.from({ length: DOCS }, () => {
  let text = '';
  for (let i = 0; i < WORDS_PER_DOC; i++) {
    const w = word();
    text += (i % 12 === 0 ? w[0].toUpperCase() + w.slice(1) : w) + (i % 12 === 11 ? '. ' : i % 7 === 6 ? ', ' : ' ');
  }
  return text;
});
const vectors = Array.from({ length: DOCS }, () => Float32Array.from({ length: DIM }, () => next() * 2 - 1));
const textBytes = texts.reduce((sum, t) => sum + Buffer.byteLength(t), 0);

/** Fill an index; wall time, and this process's CPU time (steadier on a shared machine). */
function fill(withText: boolean, analyzer: AnalyzerName): { index: VectorIndex; ms: number; cpuMs: number } {
  const index = new VectorIndex(loadKernelModule(), DOCS);
  (globalThis as { gc?: () => void }).gc?.();
  const start = performance.now(),
    cpu = process.cpuUsage();
  for (let at = 0; at < DOCS; at += 1000) {
    const batch: VectorInput[] = [];
    for (let i = at; i < Math.min(DOCS, at + 1000); i++) {
      batch.push(withText ? { id: `d${i}`, vector: vectors[i], text: texts[i] } : { id: `d${i}`, vector: vectors[i], metadata: { text: texts[i] } });
    }
    index.upsert(batch, { analyzer });
  }
  const used = process.cpuUsage(cpu);
  return { index, ms: performance.now() - start, cpuMs: (used.user + used.system) / 1000 };
}

const rows: Record<string, string | number>[] = [];
for (const analyzer of ['standard', 'english'] as AnalyzerName[]) {
  const fills = { text: [] as number[], metadata: [] as number[], textCpu: [] as number[], metadataCpu: [] as number[] };
  let index: VectorIndex | null = null;
  for (let round = 0; round < (quick ? 1 : 3); round++) {
    const meta = fill(false, analyzer);
    fills.metadata.push(meta.ms);
    fills.metadataCpu.push(meta.cpuMs);
    const withText = fill(true, analyzer);
    fills.text.push(withText.ms);
    fills.textCpu.push(withText.cpuMs);
    index = withText.index;
  }
  const queryNext = rng(7);
  const queries = Array.from({ length: 300 }, () => {
    // One common-ish word, two rarer ones: ranks 50-500 and 500-20000.
    const pick = (lo: number, hi: number) => words[COMMON.length + lo + Math.floor(queryNext() * (hi - lo))];
    return `${pick(0, 500)} ${pick(500, 5000)} ${pick(5000, 20_000)}`;
  });
  const queryVectors = queries.map(() => Float32Array.from({ length: DIM }, () => queryNext() * 2 - 1));
  const timed = (run: (i: number) => unknown) => {
    for (let i = 0; i < 20; i++) run(i);
    return queries
      .map((_, i) => {
        const t = performance.now();
        run(i);
        return performance.now() - t;
      })
      .sort((a, b) => a - b);
  };
  const times = timed((i) => index!.search(null, { queryTexts: [queries[i]] }));
  const vectorTimes = timed((i) => index!.search([queryVectors[i]]));
  const hybridTimes = timed((i) => index!.search([queryVectors[i]], { queryTexts: [queries[i]] }));
  const stats = index!.stats().text;
  rows.push({
    analyzer,
    docs: DOCS,
    dim: DIM,
    'text MB': fmt(textBytes / 1e6, 1),
    'store/text': fmt(index!.stats().textBytes / textBytes, 3),
    'index/text': fmt((index!.stats().textBytes - stats.jsonBytes) / textBytes, 3),
    terms: stats.terms,
    'query p50 ms': fmt(median(times), 3),
    'query p99 ms': fmt(times[Math.floor(times.length * 0.99)], 3),
    'vector p50 ms': fmt(median(vectorTimes), 3),
    'hybrid p50 ms': fmt(median(hybridTimes), 3),
    'hybrid/(vector+keyword)': fmt(median(hybridTimes) / (median(vectorTimes) + median(times)), 2),
    'fill text ms': fmt(median(fills.text), 0),
    'fill metadata ms': fmt(median(fills.metadata), 0),
    'text/metadata': fmt(median(fills.text) / median(fills.metadata), 2),
    'cpu text/metadata': fmt(median(fills.textCpu) / median(fills.metadataCpu), 2),
  });
}
printTable(rows);
