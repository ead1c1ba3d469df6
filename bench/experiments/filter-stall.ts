// npm run bench:experiment -- filter-stall [root]: issue 33's filter table.
// A session of 1,000 rows with about 7 KB of metadata each; POST
// /vectors/count with filters whose operands are arrays, objects and long
// strings; for each, the longest event-loop stall while it runs (a 1 ms timer
// notes the longest gap) and the request's time. `root` is another checkout
// (e.g. /work/main) to measure its code with this script: before and after.
import { performance } from 'node:perf_hooks';

const root = process.argv[2] ?? new URL('../../', import.meta.url).pathname;
const { startApp } = (await import(`${root}/test/helpers/live-app.ts`)) as typeof import('../../test/helpers/live-app.js');

const ROWS = 1000;
/** Runs of each filter (the median is printed); RUNS=1 for a slow before. */
const RUNS = Number(process.env.RUNS ?? 3);
const long = (i: number) => `${String(i).padStart(4, '0')}${'s'.repeat(396)}`;
function metadata(i: number): Record<string, unknown> {
  const out: Record<string, unknown> = { a: [i % 100], s: long(i % 300), same: long(0), n: i };
  for (let k = 0; k < 44; k++) out[`f${k}`] = `${k}-${i}-${'x'.repeat(140)}`;
  return out;
}

/** The longest gap of a 1 ms timer while `run` is pending, and its own time. */
async function stall(run: () => Promise<unknown>): Promise<{ stallMs: number; ms: number; answer: unknown }> {
  let last = performance.now();
  let longest = 0;
  const timer = setInterval(() => {
    const now = performance.now();
    longest = Math.max(longest, now - last);
    last = now;
  }, 1);
  const started = performance.now();
  const answer = await run();
  const ms = performance.now() - started;
  longest = Math.max(longest, performance.now() - last);
  clearInterval(timer);
  return { stallMs: longest, ms, answer };
}

const live = await startApp({ maxFilterNodes: 1_000_000, maxBodyBytes: 32 * 1024 * 1024, requestRatePerSec: 0 } as never);
const token = await live.newToken();
for (let from = 0; from < ROWS; from += 100) {
  const vectors = Array.from({ length: 100 }, (_, j) => ({ id: `v${from + j}`, vector: [1, from + j + 1], metadata: metadata(from + j) }));
  const res = await live.send('POST', '/vectors/add-many', { token, body: { vectors } });
  if (res.status !== 200) throw new Error(JSON.stringify(res.body));
}

const arrays = (n: number) => ({ a: { $in: Array.from({ length: n }, (_, i) => [i]) } });
const cases: [string, Record<string, unknown>][] = [
  ['$in of 100 arrays', arrays(100)],
  ['$in of 1023 arrays', arrays(1023)],
  ['$in of 2000 arrays', arrays(2000)],
  ['$in of 5000 arrays', arrays(5000)],
  ['$in of 300 strings of 400 bytes', { s: { $in: Array.from({ length: 300 }, (_, i) => long(i)) } }],
  ['$in of 1023 copies of the string every row holds', { same: { $in: Array.from({ length: 1023 }, () => long(0)) } }],
  ['$gt on long strings (reads every row)', { same: { $gt: '' } }],
  // maxFilterKeys (64) bounds the clauses with keys: ranges and objects.
  ['$or of 30 distinct $gt on long strings', { $or: Array.from({ length: 30 }, (_, i) => ({ same: { $gt: String(i) } })) }],
  ['$in of 60 objects', { a: { $in: Array.from({ length: 60 }, (_, i) => ({ k: i })) } }],
  ['$in of 1000 arrays of 3 long strings', { a: { $in: Array.from({ length: 1000 }, (_, i) => [long(i), long(i + 1), long(i + 2)]) } }],
];
/** ONLY=0,2,4: just those cases (the slow ones on the code before take minutes). */
const only = process.env.ONLY?.split(',').map(Number);
console.log(`| filter | body bytes | count | longest stall (ms) | request (ms) |`);
console.log(`|---|---|---|---|---|`);
for (const [i, [name, filter]] of cases.entries()) {
  if (only && !only.includes(i)) continue;
  const runs = [];
  for (let r = 0; r < RUNS; r++) runs.push(await stall(() => live.send('POST', '/vectors/count', { token, body: { filter }, timeoutMs: 600_000 })));
  const best = runs.sort((x, y) => x.stallMs - y.stallMs)[RUNS >> 1];
  const count = (best.answer as { body: { count?: number; error?: { code: string } } }).body;
  console.log(`| ${name} | ${JSON.stringify({ filter }).length} | ${count.count ?? count.error?.code} | ${best.stallMs.toFixed(1)} | ${best.ms.toFixed(1)} |`);
}
await live.close();
