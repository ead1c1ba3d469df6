// npm run bench:http: POST /search over HTTP against the server in a child
// process, on sessions of 1k and 10k vectors x 384 (cosine, top 10, 64
// different queries as JSON numbers, cycled), next to POST /bare on the same
// server, which only reads and parses the same bodies and answers a constant
// (the framework floor). undici, 16 requests in flight; rounds of each target
// interleaved. Besides req/s it prints the server's CPU time per request,
// which moves less with the load of a shared machine than req/s does.
// Goal: /search on 1k x 384 >= 0.7x the requests/s of the floor. Both floors
// are printed: the plain one answers {"success":true}, the sized one a
// constant as large as a search answer.
import { performance } from 'node:perf_hooks';
import { encodeFloat32Base64 } from '../src/schemas/base64-float32.js';
import { rowOf, uniformVectors } from './lib/data.js';
import { startChildServer, type ChildServer } from './lib/child-server.js';
import { fmt, median, printTable, quick } from './lib/measure.js';
import { writeResults } from './lib/results.js';

const DIM = 384;
const IN_FLIGHT = 16;
const ROUND_MS = quick ? 500 : 2500;
const ROUNDS = quick ? 1 : 5;

async function load(server: ChildServer, path: string, bodies: Buffer[], token?: string) {
  const { pool } = server;
  const cpu0 = server.cpuMicros();
  const headers: Record<string, string> = { 'content-type': 'application/json' };
  if (token) headers.authorization = `Bearer ${token}`;
  const latencies: number[] = [];
  const end = performance.now() + ROUND_MS;
  let sent = 0;
  const worker = async () => {
    while (performance.now() < end) {
      const t0 = performance.now();
      const res = await pool.request({ method: 'POST', path, headers, body: bodies[sent++ % bodies.length] });
      await res.body.dump();
      if (res.statusCode !== 200) throw new Error(`${path}: ${res.statusCode}`);
      latencies.push(performance.now() - t0);
    }
  };
  const t0 = performance.now();
  await Promise.all(Array.from({ length: IN_FLIGHT }, worker));
  const seconds = (performance.now() - t0) / 1000;
  latencies.sort((a, b) => a - b);
  return {
    rps: latencies.length / seconds,
    p50: latencies[Math.floor(latencies.length * 0.5)],
    p99: latencies[Math.floor(latencies.length * 0.99)],
    cpuPerRequest: (server.cpuMicros() - cpu0) / latencies.length,
  };
}

const server = await startChildServer();
const sessions: Record<string, string> = {};
for (const n of [1_000, 10_000]) {
  const token = (await server.post('/token', '')).token as string;
  const data = uniformVectors(n, DIM, 70 + n);
  for (let start = 0; start < n; start += 1000) {
    const vectors = Array.from({ length: Math.min(1000, n - start) }, (_, i) => ({
      id: `v${start + i}`,
      vector: encodeFloat32Base64(rowOf(data, DIM, start + i)),
    }));
    await server.post('/vectors/add-many', JSON.stringify({ vectors }), token);
  }
  sessions[`${n / 1000}k`] = token;
}
// 64 different queries, cycled, for every target alike (no answer is ever the same twice in a row).
const queries = uniformVectors(64, DIM, 99);
const bodies = Array.from({ length: 64 }, (_, q) => Buffer.from(JSON.stringify({ queryVector: Array.from(rowOf(queries, DIM, q)), topK: 10 })));
// The second floor answers a constant of the same shape and size as a real
// /search answer (one, captured here), so that the client's and the server's
// cost of a ~1 KB answer against a 16-byte one is not counted as search work.
const sample = await server.post('/search', bodies[0], sessions['1k']);
await server.post('/bench/answer', JSON.stringify(sample));
const targets = [
  { name: 'bare route (floor)', path: '/bare', token: undefined },
  { name: 'bare route, search-sized answer', path: '/bare-sized', token: undefined },
  { name: 'POST /search 1k x 384', path: '/search', token: sessions['1k'] },
  { name: 'POST /search 10k x 384', path: '/search', token: sessions['10k'] },
];
const results = targets.map(() => [] as Awaited<ReturnType<typeof load>>[]);
await load(server, '/bare', bodies); // warm-up
for (let r = 0; r < ROUNDS; r++) {
  for (let k = 0; k < targets.length; k++) {
    const i = (k + r) % targets.length;
    results[i].push(await load(server, targets[i].path, bodies, targets[i].token));
  }
}
await server.stop();

const rpsOf = (i: number) => median(results[i].map((x) => x.rps));
const cpuOf = (i: number) => median(results[i].map((x) => x.cpuPerRequest));
const rows = targets.map((t, i) => ({
  target: t.name,
  'req/s': Math.round(rpsOf(i)),
  'p50 ms': median(results[i].map((x) => x.p50)),
  'p99 ms': median(results[i].map((x) => x.p99)),
  'server CPU us/req': Math.round(cpuOf(i)),
  'vs floor': fmt(rpsOf(i) / rpsOf(0)),
  'vs sized floor': fmt(rpsOf(i) / rpsOf(1)),
  'CPU: floor / this': fmt(cpuOf(0) / cpuOf(i)),
  'CPU: sized floor / this': fmt(cpuOf(1) / cpuOf(i)),
}));
printTable(rows);
console.log(`results: ${writeResults('http', { dim: DIM, inFlight: IN_FLIGHT, bodyBytes: bodies[0].length, rows })}`);
