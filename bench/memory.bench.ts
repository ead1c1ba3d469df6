// npm run bench:memory: the peak resident set size of the server (a child
// process) holding 100 sessions of 10k x 384 float32 vectors, against the
// raw size of those vectors; also what GET /session reports as the
// sessions' linear memory. Goal: peak RSS <= 1.3x the raw float32 data.
// Vectors are sent as base64 (1000 per add-many) to keep the run short.
import { encodeFloat32Base64 } from '../src/schemas/base64-float32.js';
import { rowOf, uniformVectors } from './lib/data.js';
import { startChildServer } from './lib/child-server.js';
import { fmt, printTable, quick } from './lib/measure.js';
import { writeResults } from './lib/results.js';

const SESSIONS = quick ? 4 : 100;
const PER_SESSION = 10_000;
const DIM = 384;
const vectorType = process.argv.includes('--int8') ? 'int8' : 'float32';

const server = await startChildServer();
const baseline = server.rss().current;
// One set of request bodies, reused for every session (ids are per session anyway).
const data = uniformVectors(PER_SESSION, DIM, 81);
const bodies = Array.from({ length: PER_SESSION / 1000 }, (_, b) =>
  Buffer.from(
    JSON.stringify({
      vectorType,
      vectors: Array.from({ length: 1000 }, (_, i) => ({ id: `v${b * 1000 + i}`, vector: encodeFloat32Base64(rowOf(data, DIM, b * 1000 + i)) })),
    }),
  ),
);
let linear = 0;
let linearUsed = 0;
let codeBytes = 0;
for (let s = 0; s < SESSIONS; s++) {
  const token = (await server.post('/token', '')).token as string;
  for (const body of bodies) await server.post('/vectors/add-many', body, token);
  const { stats } = await server.get('/session', token);
  linear += stats.linearMemoryBytes;
  linearUsed += stats.linearMemoryUsedBytes;
  codeBytes += stats.codeBytes ?? 0;
}
const { peak, current } = server.rss();
await server.stop();

const raw = SESSIONS * PER_SESSION * DIM * 4;
const MB = (x: number) => `${fmt(x / 2 ** 20, 1)} MiB`;
const rows = [
  { measure: 'raw float32 vectors', bytes: MB(raw), 'vs raw': '1.000' },
  { measure: 'int8 codes', bytes: MB(codeBytes), 'vs raw': fmt(codeBytes / raw) },
  { measure: 'linear memory held (GET /session)', bytes: MB(linear), 'vs raw': fmt(linear / raw) },
  { measure: 'linear memory used by rows', bytes: MB(linearUsed), 'vs raw': fmt(linearUsed / raw) },
  { measure: 'server RSS before sessions', bytes: MB(baseline), 'vs raw': fmt(baseline / raw) },
  { measure: 'server RSS at the end', bytes: MB(current), 'vs raw': fmt(current / raw) },
  { measure: 'server peak RSS', bytes: MB(peak), 'vs raw': fmt(peak / raw) },
];
console.log(`${SESSIONS} sessions x ${PER_SESSION} x ${DIM} (${vectorType}); goal: peak RSS <= 1.3x (raw + codes) = ${MB(1.3 * (raw + codeBytes))}`);
printTable(rows);
console.log(
  `results: ${writeResults(vectorType === 'int8' ? 'memory-int8' : 'memory', { sessions: SESSIONS, perSession: PER_SESSION, dim: DIM, vectorType, raw, codeBytes, linear, linearUsed, baseline, peak, current, tables: { rows } })}`,
);
