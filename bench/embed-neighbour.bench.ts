// npm run bench:embed-neighbour: a neighbour session's search latency while
// another session stores 1,000 records by their text (one add-many: the
// texts embedded on the embedding threads ahead of its write turn), against
// the same neighbour on an idle server. Issue 35's goal: the neighbour's p99
// at most 50 ms during the embedding. The server is the compiled one, as
// `npm start` runs it (bench/lib/child-server.ts), with its default threads.
//
// --quick: 200 texts.
import { encodeFloat32Base64 } from '../src/schemas/base64-float32.js';
import { startChildServer } from './lib/child-server.js';
import { rowOf, uniformVectors } from './lib/data.js';
import { fmt, printTable, quick } from './lib/measure.js';
import { neighbourLoop } from './lib/neighbour.js';
import { writeResults } from './lib/results.js';

const TEXTS = quick ? 200 : 1000;
const NEIGHBOUR = 1000;
const DIM = 384;
const EVERY_MS = 10;
const IDLE_MS = 3000;

const WORDS = 'river market garden winter engine letter doctor window music summer forest silver castle bridge ocean travel'.split(' ');
/** Sentences of 8 to 23 words, deterministic, every one different. */
const texts = Array.from(
  { length: TEXTS },
  (_, i) => Array.from({ length: 8 + (i % 16) }, (_, w) => WORDS[(i * 7 + w * 3 + (i >> 4)) % WORDS.length]).join(' ') + ` number ${i}.`,
);

const server = await startChildServer();
try {
  const neighbourData = uniformVectors(NEIGHBOUR, DIM, 35);
  const neighbour = (await server.post('/token', '')).token as string;
  const vectors = Array.from({ length: NEIGHBOUR }, (_, j) => ({ id: `n${j}`, vector: encodeFloat32Base64(rowOf(neighbourData, DIM, j)) }));
  await server.post('/vectors/add-many', Buffer.from(JSON.stringify({ vectors })), neighbour);
  const search = Buffer.from(JSON.stringify({ queryVector: Array.from(rowOf(neighbourData, DIM, 7)), topK: 10 }));

  let stop = neighbourLoop(server, neighbour, search, EVERY_MS);
  await new Promise((resolve) => setTimeout(resolve, IDLE_MS));
  const idle = await stop();

  const writer = (await server.post('/token', '')).token as string;
  // The threads start with the first text (EMBEDDING_PRELOAD unset): loaded before the timed run, as a warm server has them.
  await server.post('/embed', Buffer.from(JSON.stringify({ texts: ['warm up'] })), writer);
  const body = Buffer.from(JSON.stringify({ vectors: texts.map((text, i) => ({ id: `t${i}`, text })) }));
  stop = neighbourLoop(server, neighbour, search, EVERY_MS);
  const t0 = performance.now();
  const answer = await server.post('/vectors/add-many', body, writer);
  const fillMs = performance.now() - t0;
  const during = await stop();
  if (answer.mutation?.added !== TEXTS) throw new Error(`add-many answered ${JSON.stringify(answer).slice(0, 200)}`);

  const rows = [
    { neighbour: 'idle server', p50Ms: fmt(idle.p50), p99Ms: fmt(idle.p99), maxMs: fmt(idle.max), searches: idle.count },
    {
      neighbour: `while ${TEXTS} texts are embedded and stored`,
      p50Ms: fmt(during.p50),
      p99Ms: fmt(during.p99),
      maxMs: fmt(during.max),
      searches: during.count,
    },
  ];
  console.log(`Neighbour's search (1k x ${DIM}, top 10, one every ${EVERY_MS} ms):`);
  printTable(rows);
  const fill = [
    {
      texts: TEXTS,
      ms: fmt(fillMs),
      textsPerSecond: fmt((TEXTS / fillMs) * 1000),
      embedMs: fmt(answer.metrics.embedMs),
      goalP99Ms: 50,
      met: String(during.p99 <= 50),
    },
  ];
  console.log('The add-many of records by text:');
  printTable(fill);
  writeResults('embed-neighbour', { tables: { neighbour: rows, fill } });
} finally {
  await server.stop();
}
