// npm run bench:ingest: POST /vectors/add-many of 1000 x 384, as JSON
// numbers and as base64 float32 strings, against JSON.parse alone of the
// JSON body (timed in this process, in the same rounds). Each add-many
// replaces the same 1000 ids. Two measurements:
// - service (the goal's figure): the server in a child process, undici with
//   several requests in flight, so the client's work and the event-loop
//   ping-pong between client and server are not the server's; vectors/s the
//   server sustains, and its CPU time per request (process.cpuUsage in the
//   server, steadier on a shared machine than wall time).
// - in process: client and server in this process, one request at a time;
//   the time includes sending the body and every turn of the event loop
//   between the two.
// Goals: JSON add-many >= 0.7x the JSON.parse rate; base64 >= 10x faster per
// vector than JSON number arrays.
import { performance } from 'node:perf_hooks';
import { encodeFloat32Base64 } from '../src/schemas/base64-float32.js';
import { startChildServer, type ChildServer } from './lib/child-server.js';
import { rowOf, uniformVectors } from './lib/data.js';
import { fmt, median, printTable, quick, writeResults } from './lib/measure.js';
import { startServer } from './lib/server.js';

const N = quick ? 100 : 1000;
const DIM = 384;
const ROUNDS = quick ? 3 : 9;
/** Requests in flight against the child server, and requests per case per round. */
const IN_FLIGHT = 4;
const PER_ROUND = quick ? 8 : 24;
const data = uniformVectors(N, DIM, 51);
const ids = Array.from({ length: N }, (_, i) => `doc-${i}`);
const jsonBody = JSON.stringify({ vectors: ids.map((id, i) => ({ id, vector: Array.from(rowOf(data, DIM, i)) })) });
const base64Body = JSON.stringify({ vectors: ids.map((id, i) => ({ id, vector: encodeFloat32Base64(rowOf(data, DIM, i)) })) });
const jsonBytes = Buffer.from(jsonBody);
const base64Bytes = Buffer.from(base64Body);

/** Milliseconds of CPU (user + system) the child server has used so far. */
async function cpuMs(child: ChildServer): Promise<number> {
  const { user, system } = await child.get('/bench/cpu');
  return (user + system) / 1000;
}

/** `count` add-many requests, IN_FLIGHT at a time; wall ms per request and server CPU ms per request. */
async function load(child: ChildServer, body: Buffer, token: string, count: number) {
  const headers = { 'content-type': 'application/json', authorization: `Bearer ${token}` };
  let left = count;
  const worker = async () => {
    while (left-- > 0) {
      const res = await child.pool.request({ method: 'POST', path: '/vectors/add-many', headers, body });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`add-many: ${res.statusCode}`);
    }
  };
  const cpu0 = await cpuMs(child);
  const t0 = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const wall = (performance.now() - t0) / count;
  return { wall, cpu: (await cpuMs(child) - cpu0) / count };
}

function parseRound(): number {
  const t0 = performance.now();
  for (let n = 0; n < 3; n++) JSON.parse(jsonBody);
  return (performance.now() - t0) / 3;
}

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

// Service: the server in a child process.
const child = await startChildServer();
const childToken = (await child.post('/token', '')).token as string;
await child.post('/vectors/add-many', jsonBody, childToken);
await load(child, base64Bytes, childToken, IN_FLIGHT * 2);
const serviceCases = ['JSON.parse alone', 'add-many JSON numbers', 'add-many base64'];
const serviceWall = serviceCases.map(() => [] as number[]);
const serviceCpu = serviceCases.map(() => [] as number[]);
for (let r = 0; r < ROUNDS; r++) {
  serviceWall[0].push(parseRound());
  for (const [i, body] of [[1, jsonBytes], [2, base64Bytes]] as const) {
    // JSON bodies take ~10x longer each: fewer of them keep the rounds balanced.
    const { wall, cpu } = await load(child, body, childToken, i === 1 ? Math.max(IN_FLIGHT, PER_ROUND / 4) : PER_ROUND);
    serviceWall[i].push(wall);
    serviceCpu[i].push(cpu);
  }
}
await child.stop();

const per1000 = 1000 / N;
const rowsOf = (ms: number[], cpu: (number | null)[]) => cases.map((c, i) => ({
  case: c.name,
  'ms per 1000': ms[i] * per1000,
  'vectors/s': Math.round(N / (ms[i] / 1000)),
  'vs JSON.parse': fmt(ms[0] / ms[i]),
  'server CPU ms per 1000': cpu[i] === null ? '-' : fmt(cpu[i]! * per1000, 2),
}));
const serviceMs = serviceWall.map(median);
const serviceCpuMs = [null, median(serviceCpu[1]), median(serviceCpu[2])];
const inProcessMs = perRound.map(median);
const service = rowsOf(serviceMs, serviceCpuMs);
const inProcess = rowsOf(inProcessMs, [null, null, null]);
console.log(`service: server in a child process, undici, ${IN_FLIGHT} requests in flight (JSON.parse alone timed in this process)`);
printTable(service);
console.log(`JSON add-many / JSON.parse rate: ${fmt(serviceMs[0] / serviceMs[1])} (goal >= 0.7); base64 / JSON add-many per vector: ${fmt(serviceMs[1] / serviceMs[2], 1)}x (goal >= 10x); by server CPU: ${fmt(serviceCpuMs[1]! / serviceCpuMs[2]!, 1)}x`);
console.log('in process: client and server in this process, one request at a time');
printTable(inProcess);
console.log(`JSON add-many / JSON.parse rate: ${fmt(inProcessMs[0] / inProcessMs[1])}; base64 / JSON add-many per vector: ${fmt(inProcessMs[1] / inProcessMs[2], 1)}x`);
console.log(`body bytes: JSON ${jsonBody.length}, base64 ${base64Body.length}`);
console.log(`results: ${writeResults('ingest', { vectors: N, dim: DIM, inFlight: IN_FLIGHT, service, inProcess })}`);
