// npm run bench:ingest: POST /vectors/add-many of 1000 x 384 through the
// running server (same process, loopback), against JSON.parse alone of the
// same body, and the same vectors sent as base64 float32 strings.
// Goals: JSON add-many >= 0.7x the JSON.parse rate; base64 >= 10x faster per
// vector than JSON number arrays. Each add-many replaces the same 1000 ids.
import { performance } from 'node:perf_hooks';
import { encodeFloat32Base64 } from '../src/schemas/base64-float32.js';
import { rowOf, uniformVectors } from './lib/data.js';
import { fmt, median, printTable, quick, writeResults } from './lib/measure.js';
import { startServer } from './lib/server.js';

const N = quick ? 100 : 1000;
const DIM = 384;
const ROUNDS = quick ? 3 : 9;
const data = uniformVectors(N, DIM, 51);
const ids = Array.from({ length: N }, (_, i) => `doc-${i}`);
const jsonBody = JSON.stringify({ vectors: ids.map((id, i) => ({ id, vector: Array.from(rowOf(data, DIM, i)) })) });
const base64Body = JSON.stringify({ vectors: ids.map((id, i) => ({ id, vector: encodeFloat32Base64(rowOf(data, DIM, i)) })) });

const jsonBytes = Buffer.from(jsonBody);
const base64Bytes = Buffer.from(base64Body);
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

const ms = perRound.map(median);
const rate = (i: number) => N / (ms[i] / 1000);
const rows = cases.map((c, i) => ({
  case: c.name, 'ms per 1000': ms[i] * (1000 / N), 'vectors/s': Math.round(rate(i)), 'vs JSON.parse': fmt(rate(i) / rate(0)),
}));
printTable(rows);
console.log(`JSON add-many / JSON.parse rate: ${fmt(rate(1) / rate(0))} (goal >= 0.7); base64 / JSON add-many per vector: ${fmt(rate(2) / rate(1), 1)}x (goal >= 10x)`);
console.log(`body bytes: JSON ${jsonBody.length}, base64 ${base64Body.length}`);
console.log(`results: ${writeResults('ingest', { vectors: N, dim: DIM, rows })}`);
