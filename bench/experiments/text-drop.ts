// npm run bench:experiment -- text-drop [--docs 1000] [--distinct]: what
// removing stored texts costs in a write's turn. 1,000 texts of 32 KiB of
// Cyrillic (made-up words, Zipf-distributed over 30k; --distinct: every word
// of a text new, the most terms a text can hold) are written, then replaced
// by an add-many of the same ids (texts analysed ahead, as the route does),
// then deleted by two delete-many (every other id, the rest), written again
// and deleted by one; then written again and cleared, and reset.
// Prints each turn's time (the event loop's stall: the turn is synchronous)
// and the text store's bytes against the texts' own. --http: the same
// requests to a child server (dist/, as `npm start` runs it) while a
// neighbour session searches every 10 ms; prints the neighbour's longest
// wait during each request.
import { performance } from 'node:perf_hooks';
import { rng } from '../lib/data.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import type { VectorInput } from '../../src/index/types.js';
import { VectorIndex } from '../../src/index/vector-index.js';
import { prepareTextsAhead } from '../../src/sessions/texts-ahead.js';
import { startChildServer } from '../lib/child-server.js';

const argAfter = (flag: string) => (process.argv.includes(flag) ? process.argv[process.argv.indexOf(flag) + 1] : undefined);
const DOCS = Number(argAfter('--docs') ?? 1000);
const DISTINCT = process.argv.includes('--distinct');
const TEXT_BYTES = 32 * 1024;
const next = rng(42);

const SYLLABLES = 'ка ро ми на ту ле сво бо да пра вый ст ор ен жи зни ско ль ко вал гор дом'.split(' ');
function word(): string {
  let w = '';
  for (let n = 1 + Math.floor(next() * 3); n > 0; n--) w += SYLLABLES[Math.floor(next() * SYLLABLES.length)];
  return w;
}
const vocabulary = [...new Set(Array.from({ length: 40_000 }, word))].slice(0, 30_000);
const cumulative = new Float64Array(vocabulary.length);
let weights = 0;
for (let r = 0; r < vocabulary.length; r++) cumulative[r] = weights += 1 / (r + 1);
function zipfWord(): string {
  const x = next() * weights;
  let lo = 0,
    hi = vocabulary.length - 1;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (cumulative[mid] < x) lo = mid + 1;
    else hi = mid;
  }
  return vocabulary[lo];
}
let serial = 0;
/** A distinct word: a number written in Cyrillic letters. */
const distinctWord = () => [...(serial++).toString(32)].map((c) => String.fromCharCode(0x430 + parseInt(c, 32))).join('');

function text(): string {
  const parts: string[] = [];
  let bytes = 0;
  for (;;) {
    const w = DISTINCT ? distinctWord() : zipfWord();
    const add = Buffer.byteLength(w) + 1;
    if (bytes + add > TEXT_BYTES) return parts.join(' ');
    parts.push(w);
    bytes += add;
  }
}

const module = loadKernelModule();
const batch = (): VectorInput[] => Array.from({ length: DOCS }, (_, i) => ({ id: `d${i}`, vector: [1, i % 7, 2], text: text() }));

interface Timed {
  ms: number;
  cpuMs: number;
}

function timed(run: () => unknown): Timed {
  const start = performance.now(),
    cpu = process.cpuUsage();
  run();
  const used = process.cpuUsage(cpu);
  return { ms: performance.now() - start, cpuMs: (used.user + used.system) / 1000 };
}

/** The write turn of an add-many: texts analysed ahead (not timed), then prepareUpsert and applyUpsert. */
async function addMany(index: VectorIndex, records: VectorInput[]): Promise<Timed> {
  const preparedTexts = await prepareTextsAhead({ index, tokenHash: '' }, records, {});
  return timed(() => index.applyUpsert(index.prepareUpsert(records, { preparedTexts })));
}

/** The add-many and delete-many requests over HTTP, a neighbour searching every 10 ms meanwhile. */
async function overHttp(): Promise<void> {
  const server = await startChildServer();
  try {
    const newToken = async () => ((await (await server.pool.request({ method: 'POST', path: '/token' })).body.json()) as { token: string }).token;
    const token = await newToken(),
      neighbour = await newToken();
    const small = Array.from({ length: 200 }, (_, i) => ({ id: `n${i}`, vector: [1, i % 7, 2], text: `слово ${i % 13} текст` }));
    await server.post('/vectors/add-many', JSON.stringify({ vectors: small }), neighbour);
    const search = Buffer.from(JSON.stringify({ queryVector: [1, 2, 3], topK: 5 }));
    const timedRequest = async (label: string, path: string, body: string) => {
      // The neighbour's searches, a failure (a reset connection) counted rather than thrown.
      let running = true,
        longest = 0,
        searches = 0,
        failures = 0;
      const neighbourDone = (async () => {
        while (running) {
          const t0 = performance.now();
          await server.post('/search', search, neighbour).catch(() => failures++);
          const ms = performance.now() - t0;
          longest = Math.max(longest, ms);
          searches++;
          if (ms < 10) await new Promise((resolve) => setTimeout(resolve, 10 - ms));
        }
      })();
      const start = performance.now();
      const failed = await server.post(path, body, token).then(
        () => '',
        (error: Error) => ` (failed: ${error.message.slice(0, 80)})`,
      );
      const took = performance.now() - start;
      running = false;
      await neighbourDone;
      console.log(
        `${label}: request ${took.toFixed(0)} ms${failed}; neighbour's longest wait ${longest.toFixed(0)} ms (${searches} searches, ${failures} failed)`,
      );
    };
    const first = batch();
    await server.post('/vectors/add-many', JSON.stringify({ vectors: first }), token);
    await timedRequest('add-many replacing every text', '/vectors/add-many', JSON.stringify({ vectors: batch() }));
    const ids = first.map((r) => r.id);
    await timedRequest(`delete-many of every other id (${ids.length / 2})`, '/vectors/delete-many', JSON.stringify({ ids: ids.filter((_, i) => i % 2 === 1) }));
    await server.post('/vectors/add-many', JSON.stringify({ vectors: first }), token);
    await timedRequest(`delete-many of all ${ids.length}`, '/vectors/delete-many', JSON.stringify({ ids }));
  } finally {
    await server.stop();
  }
}
if (process.argv.includes('--http')) {
  await overHttp();
  process.exit(0);
}

const mb = (bytes: number) => (bytes / 1024 / 1024).toFixed(1) + ' MiB';
const index = new VectorIndex(module, DOCS * 2);
const first = batch();
// Wall time is the stall a neighbour sees; CPU time is steadier on a shared machine.
const ms = (x: Timed) => `${x.ms.toFixed(0)} ms (cpu ${x.cpuMs.toFixed(0)} ms)`;
console.log(`${DOCS} texts of ${TEXT_BYTES / 1024} KiB of Cyrillic, ${DISTINCT ? 'every word distinct' : 'Zipf over 30k words'}`);
console.log('add-many (new ids) turn', ms(await addMany(index, first)));
const stats = index.stats().text;
// The documents' term lists, read through the privates (an experiment's peek; undefined before they existed).
const termLists = (index as unknown as { texts: { indexOrNull: { termsOf?: { usedBytes: number } } } }).texts.indexOrNull.termsOf;
console.log(
  `stored: texts ${mb(stats.jsonBytes)}, index ${mb(stats.indexBytes)} (${stats.terms} terms), text store ${mb(index.stats().textBytes)}; ` +
    `${((index.stats().textBytes - stats.jsonBytes) / stats.jsonBytes).toFixed(2)} of the texts' bytes beside them; ` +
    `documents' term lists ${termLists ? mb(termLists.usedBytes) + ` (${((100 * termLists.usedBytes) / stats.jsonBytes).toFixed(1)}% of the texts)` : 'none'}`,
);
console.log('add-many replacing every text, turn', ms(await addMany(index, batch())));
const ids = first.map((r) => r.id);
const odd = ids.filter((_, i) => i % 2 === 1);
console.log(`delete-many of every other id (${odd.length}), turn`, ms(timed(() => index.delete(odd))));
console.log(`delete-many of the rest (${ids.length - odd.length}), turn`, ms(timed(() => index.delete(ids))));
await addMany(index, first);
console.log(`delete-many of all ${ids.length}, turn`, ms(timed(() => index.delete(ids))));
await addMany(index, first);
console.log('clear, turn', ms(timed(() => index.clear())));
await addMany(index, first);
console.log('reset, turn', ms(timed(() => index.reset())));
