// npm run bench:experiment -- gc-flags: the Node flags `npm start` gives the server
// (package.json: --initial-old-space-size=128) against none and against
// --no-incremental-marking, each a child server as the service runs:
// - receive: server CPU per 2 MB body that /bench/drain takes in and drops
//   (4 requests in flight; three processes per setting, since a process's GC
//   state moves its figure more than the rounds do), the floor of every base64
//   add-many;
// - latency under churn: POST /search latency on one 10k x 384 session while
//   add-many replaces 1000 vectors with new metadata in the other sessions
//   (old-generation garbage, so the full collections the flags change run),
//   p50 / p99 / p99.9 / max and peak RSS.
// Each large body's 64 KB socket reads are ArrayBuffers outside the JS heap;
// the young collections they set off promote the objects of the requests in
// flight, and with V8's small starting old-generation limit that starts a
// marking cycle every few dozen requests.
import { encodeFloat32Base64 } from '../../src/schemas/base64-float32.js';
import { postLoad, startChildServer, startScriptNodeFlags, type ChildServer } from '../lib/child-server.js';
import { rowOf, uniformVectors } from '../lib/data.js';
import { fmt, median, printTable, quick } from '../lib/measure.js';
import { writeExperimentResults } from '../lib/results.js';

const settings: Record<string, string[]> = {
  'none (Node defaults)': [],
  'npm start': startScriptNodeFlags(),
  '--no-incremental-marking': ['--no-incremental-marking'],
};
const DIM = 384;

/** Server CPU ms per request of `count` POSTs of `body` to `path`, 4 in flight. */
const cpuPerRequest = async (child: ChildServer, path: string, body: Buffer, count: number) => (await postLoad(child, path, body, undefined, count, 4)).cpu;

async function receive(): Promise<Record<string, number[]>> {
  const data = uniformVectors(1000, DIM, 51);
  const body = Buffer.from(
    JSON.stringify({ vectors: Array.from({ length: 1000 }, (_, i) => ({ id: `doc-${i}`, vector: encodeFloat32Base64(rowOf(data, DIM, i)) })) }),
  );
  const names = Object.keys(settings);
  const children = await Promise.all(names.flatMap((name) => [0, 1, 2].map(async () => ({ name, child: await startChildServer({}, settings[name]) }))));
  const rounds = quick ? 2 : 5;
  const perChild = children.map(() => [] as number[]);
  for (const { child } of children) await cpuPerRequest(child, '/bench/drain', body, 32);
  for (let r = 0; r < rounds; r++) {
    for (let i = 0; i < children.length; i++) perChild[i].push(await cpuPerRequest(children[i].child, '/bench/drain', body, quick ? 16 : 64));
  }
  await Promise.all(children.map(({ child }) => child.stop()));
  return Object.fromEntries(names.map((name) => [name, children.flatMap((c, i) => (c.name === name ? [median(perChild[i])] : []))]));
}

async function latencyUnderChurn(flags: string[]) {
  const sessions = quick ? 4 : 60;
  const per = 10_000;
  const seconds = quick ? 2 : 15;
  const server = await startChildServer({}, flags);
  const data = uniformVectors(per, DIM, 81);
  const vectors = Array.from({ length: per }, (_, i) => encodeFloat32Base64(rowOf(data, DIM, i)));
  const batch = (b: number, round: number) =>
    Buffer.from(
      JSON.stringify({
        vectors: Array.from({ length: 1000 }, (_, i) => ({
          id: `v${b * 1000 + i}`,
          vector: vectors[b * 1000 + i],
          metadata: { round, text: `item ${i} of batch ${b} in round ${round}`, tags: ['a', 'b', String(i % 7)] },
        })),
      }),
    );
  const tokens: string[] = [];
  for (let s = 0; s < sessions; s++) {
    const token = (await server.post('/token', '')).token as string;
    tokens.push(token);
    for (let b = 0; b < per / 1000; b++) await server.post('/vectors/add-many', batch(b, 0), token);
  }
  const queries = uniformVectors(64, DIM, 5);
  const latencies: number[] = [];
  const until = performance.now() + seconds * 1000;
  const search = async () => {
    for (let j = 0; performance.now() < until; j++) {
      const t0 = performance.now();
      const res = await server.pool.request({
        method: 'POST',
        path: '/search',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[0]}` },
        body: JSON.stringify({ queryVector: Array.from(rowOf(queries, DIM, j % 64)), topK: 10 }),
      });
      await res.body.dump();
      latencies.push(performance.now() - t0);
    }
  };
  const replacements = Array.from({ length: 10 }, (_, b) => batch(b, b + 1));
  const churn = async () => {
    for (let n = 0; performance.now() < until; n++) {
      const res = await server.pool.request({
        method: 'POST',
        path: '/vectors/add-many',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${tokens[1 + (n % (sessions - 1))]}` },
        body: replacements[n % replacements.length],
      });
      await res.body.dump();
    }
  };
  await Promise.all([search(), search(), churn()]);
  const peakRss = server.rss().peak;
  await server.stop();
  latencies.sort((a, b) => a - b);
  const at = (p: number) => fmt(latencies[Math.min(latencies.length - 1, Math.floor(p * latencies.length))], 1);
  return {
    searches: latencies.length,
    'p50 ms': at(0.5),
    'p99 ms': at(0.99),
    'p99.9 ms': at(0.999),
    'max ms': fmt(latencies[latencies.length - 1], 1),
    'peak RSS MiB': fmt(peakRss / 2 ** 20, 0),
  };
}

const drained = await receive();
const receiveRows = Object.entries(drained).map(([setting, cpu]) => ({
  setting,
  flags: settings[setting].join(' ') || '-',
  'CPU ms per 2 MB body (median)': fmt(median(cpu), 2),
  'each process': cpu.map((x) => fmt(x, 2)).join(' '),
}));
console.log('receive: server CPU to take in a 2 MB body and drop it (/bench/drain), three processes per setting');
printTable(receiveRows);
const latencyRows = [];
for (const [setting, flags] of Object.entries(settings)) latencyRows.push({ setting, ...(await latencyUnderChurn(flags)) });
console.log(`POST /search latency on a 10k x 384 session while add-many replaces vectors and metadata in the others (${quick ? 4 : 60} sessions)`);
printTable(latencyRows);
console.log(`results: ${writeExperimentResults('gc-flags', { receive: receiveRows, latency: latencyRows })}`);
process.exit(0);
