// The issue-33 replace attack against the built server (dist/, as `npm
// start` runs it): add-many of the same 1,000 ids of 256 characters, again and
// again at about 115 a second, for 30 seconds. Prints the server's RSS, its
// JS heap, and what the memory budget counts (memoryUsedBytes, heapBytes)
// before and after. Not part of the suite.
//   node --import tsx bench/experiments/replace-churn.ts [seconds] [other checkout's bench/lib/server-process.mjs]
import { startChildServer } from '../lib/child-server.js';

const seconds = Number(process.argv[2] ?? 30);
const script = process.argv[3];
const RATE = 115;

const server = await startChildServer({}, undefined, script);
const { token } = await server.post('/token', '');
const ids = Array.from({ length: 1000 }, (_, i) => `${'x'.repeat(250)}${String(i).padStart(6, '0')}`);
const body = Buffer.from(JSON.stringify({ vectors: ids.map((id, i) => ({ id, vector: [1, i + 1, 2, 3] })) }));

const figures = async () => {
  const limits = await server.get('/limits');
  const memory = await server.get('/bench/memory');
  return {
    rssMB: Math.round(server.rss().current / 1e6),
    heapUsedMB: Math.round(memory.heapUsed / 1e6),
    memoryUsedBytes: limits.usage.memoryUsedBytes,
    budgetHeapBytes: limits.usage.heapBytes,
  };
};

await server.post('/vectors/add-many', body, token);
const before = await figures();
const start = performance.now();
let sent = 0;
while (performance.now() - start < seconds * 1000) {
  const due = start + (sent * 1000) / RATE;
  const wait = due - performance.now();
  if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
  await server.post('/vectors/add-many', body, token);
  sent++;
}
const elapsed = (performance.now() - start) / 1000;
const after = await figures();
console.log(JSON.stringify({ requests: sent, perSecond: Math.round(sent / elapsed), bodyBytes: body.length, before, after }));
await server.stop();
