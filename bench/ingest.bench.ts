// npm run bench:ingest: POST /vectors/add-many of 1000 x 384, as JSON
// numbers and as base64 float32 strings, against JSON.parse alone of the
// JSON body (timed in this process, in the same rounds). Each add-many
// replaces the same 1000 ids. Two measurements:
// - service (the goal's figure): the server in child processes (one per case), undici with
//   several requests in flight, so the client's work and the event-loop
//   ping-pong between client and server are not the server's; vectors/s the
//   server sustains, and its CPU time per request (process.cpuUsage in the
//   server, steadier on a shared machine than wall time).
// - in process: client and server in this process, one request at a time;
//   the time includes sending the body and every turn of the event loop
//   between the two.
// - stages: the server's own steps after the bytes are in, each timed alone
//   on the compiled server (bench/lib/ingest-stages.ts); `-- --dist
//   before=/path/to/other/dist` (repeatable) times another build alongside.
// - export/import (bench/lib/export-import.ts): a 50k x 384 session moved
//   by add-many, GET /vectors/export (base64, numbers) and POST
//   /vectors/import: MB/s, vectors/s, the server's peak RSS; and a small
//   session's search p50/p99 alone and while the export streams.
// Goals: JSON add-many >= 0.7x the JSON.parse rate; base64 >= 10x faster per
// vector than JSON number arrays.
import { performance } from 'node:perf_hooks';
import { encodeFloat32Base64 } from '../src/schemas/base64-float32.js';
import { ensureBuiltServer, postLoad, startChildServer, type ChildServer } from './lib/child-server.js';
import { benchExportImport } from './lib/export-import.js';
import { STAGES, timeStages } from './lib/ingest-stages.js';
import { rowOf, uniformVectors } from './lib/data.js';
import { fmt, median, printTable, quick } from './lib/measure.js';
import { writeResults } from './lib/results.js';
import { startServer } from './lib/server.js';

const N = quick ? 100 : 1000;
const DIM = 384;
const ROUNDS = quick ? 3 : 9;
/** Requests in flight against the child server, and requests per case per round. */
const IN_FLIGHT = 4;
const PER_ROUND = quick ? 8 : 96;
const data = uniformVectors(N, DIM, 51);
const ids = Array.from({ length: N }, (_, i) => `doc-${i}`);
const jsonBody = JSON.stringify({ vectors: ids.map((id, i) => ({ id, vector: Array.from(rowOf(data, DIM, i)) })) });
const base64Body = JSON.stringify({ vectors: ids.map((id, i) => ({ id, vector: encodeFloat32Base64(rowOf(data, DIM, i)) })) });
const jsonBytes = Buffer.from(jsonBody);
const base64Bytes = Buffer.from(base64Body);

/** `count` requests to `path`, IN_FLIGHT at a time; wall ms per request and server CPU ms per request. */
const load = (child: ChildServer, path: string, body: Buffer, token: string, count: number) => postLoad(child, path, body, token, count, IN_FLIGHT);

function parseRound(): number {
  const t0 = performance.now();
  for (let n = 0; n < 3; n++) JSON.parse(jsonBody);
  return (performance.now() - t0) / 3;
}

/** Export/import of TRANSFER_N x DIM against add-many, and a small session's searches during an export. */
async function transferSection() {
  const n = quick ? 5000 : 50_000;
  const transfer = await benchExportImport(n, DIM);
  console.log(`export/import of ${n} x ${DIM} (one child server; peak RSS reset before each case)`);
  printTable(transfer.rows as unknown as Record<string, string | number>[]);
  const [fill, exported, , imported] = transfer.rows;
  console.log(`add-many time / export base64 time: ${fmt(fill.ms / exported.ms, 2)}; add-many time / import time: ${fmt(fill.ms / imported.ms, 2)}`);
  printTable(transfer.searches);
  console.log(`small session's search p99 while the export streams / alone: ${fmt(transfer.p99Ratio, 2)}x`);
  return transfer;
}

// `-- --transfer-only`: that part alone.
if (process.argv.includes('--transfer-only')) {
  ensureBuiltServer();
  await transferSection();
  process.exit(0);
}

// Stages first, while this process holds little else: this build's dist/
// and any --dist name=path given, alternately.
ensureBuiltServer();
const dists: Record<string, string> = {};
process.argv.forEach((arg, i) => {
  if (arg !== '--dist') return;
  const [name, path] = process.argv[i + 1].includes('=') ? process.argv[i + 1].split('=') : [process.argv[i + 1], process.argv[i + 1]];
  dists[name] = path;
});
dists.current = new URL('../dist/', import.meta.url).pathname;
const stageRounds = quick ? 20 : 200;
const stages = {
  base64: await timeStages(dists, base64Bytes, stageRounds),
  json: await timeStages(dists, jsonBytes, Math.max(8, stageRounds / 4)),
};

// In process: client and server share this process, one request at a time.
const server = await startServer();
const token = await server.token();
await server.post('/vectors/add-many', jsonBody, token);
type Case = { name: string; run: () => unknown | Promise<unknown> };
const cases: Case[] = [
  { name: 'JSON.parse alone', run: () => JSON.parse(jsonBody) },
  { name: 'add-many JSON numbers', run: () => server.post('/vectors/add-many', jsonBytes, token) },
  { name: 'add-many base64', run: () => server.post('/vectors/add-many', base64Bytes, token) },
];
const perRound = cases.map(() => [] as number[]);
for (let r = 0; r < ROUNDS; r++) {
  for (let k = 0; k < cases.length; k++) {
    const i = (k + r) % cases.length;
    const t0 = performance.now();
    for (let n = 0; n < 3; n++) await cases[i].run();
    perRound[i].push((performance.now() - t0) / 3);
  }
}
await server.close();

// Service: the server in a child process, one process per case, so that no
// case's garbage is collected on another's time (a JSON round leaves some
// hundreds of MB behind it, which one shared server then collected during
// the next rounds: the receive-only floor read 2.1 to 2.6 ms of CPU there
// against 1.1 to 1.2 alone). The last case only receives the base64 body
// and drops it: the floor any route pays to take in 2 MB.
const serviceCases: { name: string; path: string; body: Buffer; count: number }[] = [
  // JSON bodies take ~10x longer each: fewer of them keep the rounds balanced.
  { name: 'add-many JSON numbers', path: '/vectors/add-many', body: jsonBytes, count: Math.max(IN_FLIGHT, PER_ROUND / 4) },
  { name: 'add-many base64', path: '/vectors/add-many', body: base64Bytes, count: PER_ROUND },
  { name: 'receive the base64 body only (floor)', path: '/bench/drain', body: base64Bytes, count: PER_ROUND },
];
const children = await Promise.all(
  serviceCases.map(async ({ path, body, count }) => {
    const child = await startChildServer();
    const token = (await child.post('/token', '')).token as string;
    await child.post('/vectors/add-many', jsonBody, token);
    await load(child, path, body, token, count); // warm-up
    return { child, token };
  }),
);
const parseWall: number[] = [];
const serviceWall = serviceCases.map(() => [] as number[]);
const serviceCpu = serviceCases.map(() => [] as number[]);
for (let r = 0; r < ROUNDS; r++) {
  parseWall.push(parseRound());
  for (let k = 0; k < serviceCases.length; k++) {
    const i = (k + r) % serviceCases.length;
    const { path, body, count } = serviceCases[i];
    const { wall, cpu } = await load(children[i].child, path, body, children[i].token, count);
    serviceWall[i].push(wall);
    serviceCpu[i].push(cpu);
  }
}
await Promise.all(children.map(({ child }) => child.stop()));

const per1000 = 1000 / N;
const row = (name: string, ms: number, parseMs: number, cpu: number | null) => ({
  case: name,
  'ms per 1000': ms * per1000,
  'vectors/s': Math.round(N / (ms / 1000)),
  'vs JSON.parse': fmt(parseMs / ms),
  'server CPU ms per 1000': cpu === null ? '-' : fmt(cpu * per1000, 2),
});
const parseMs = median(parseWall);
const serviceMs = serviceWall.map(median);
const serviceCpuMs = serviceCpu.map(median);
const service = [row('JSON.parse alone', parseMs, parseMs, null), ...serviceCases.map((c, i) => row(c.name, serviceMs[i], parseMs, serviceCpuMs[i]))];
const inProcessMs = perRound.map(median);
const inProcess = cases.map((c, i) => row(c.name, inProcessMs[i], inProcessMs[0], null));
console.log(
  `service (the goals' figures): server in child processes (one per case), undici, ${IN_FLIGHT} requests in flight; JSON.parse alone timed in this process`,
);
printTable(service);
console.log(
  `JSON add-many / JSON.parse rate: ${fmt(parseMs / serviceMs[0])} (goal >= 0.7); base64 / JSON add-many per vector: ${fmt(serviceMs[0] / serviceMs[1], 1)}x (goal >= 10x); by server CPU: ${fmt(serviceCpuMs[0] / serviceCpuMs[1], 1)}x`,
);
console.log("in process: client and server in this process, one request at a time (the client's send and every event-loop turn count)");
printTable(inProcess);
console.log(
  `JSON add-many / JSON.parse rate: ${fmt(inProcessMs[0] / inProcessMs[1])}; base64 / JSON add-many per vector: ${fmt(inProcessMs[1] / inProcessMs[2], 1)}x`,
);
console.log("stages: the server's own steps once the bytes are in, each timed alone, ms per 1000 vectors (compiled dist/)");
const stageRows = Object.entries(stages).flatMap(([body, byBuild]) =>
  Object.entries(byBuild).map(([build, times]) => ({
    body,
    build,
    ...Object.fromEntries([...STAGES, 'total' as const].map((s) => [s, fmt(times[s] * per1000)])),
  })),
);
printTable(stageRows);
console.log(`body bytes: JSON ${jsonBody.length}, base64 ${base64Body.length}`);

const transfer = await transferSection();
console.log(
  `results: ${writeResults('ingest', { vectors: N, dim: DIM, inFlight: IN_FLIGHT, service, inProcess, stages, transfer, tables: { service, inProcess, stages: stageRows, transfer: transfer.rows } })}`,
);
