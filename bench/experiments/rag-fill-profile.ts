// One-off: the server's CPU profile while it takes the bench:rag fill with
// metadata (50,000 x 384, 500 a batch as base64), no neighbour. Run with
// CHILD_NODE_FLAGS="--cpu-prof --cpu-prof-dir=<dir>".
import { encodeFloat32Base64 } from '../../src/schemas/base64-float32.js';
import { startChildServer } from '../lib/child-server.js';
import { rowOf, uniformVectors } from '../lib/data.js';
import { chunkMetadata as metadata } from '../lib/rag-data.js';

const N = 50_000,
  DIM = 384,
  BATCH = 500;
const data = uniformVectors(N, DIM, 24);
const bodies = Array.from({ length: N / BATCH }, (_, b) =>
  Buffer.from(
    JSON.stringify({
      vectors: Array.from({ length: BATCH }, (_, j) => ({
        id: `c${b * BATCH + j}`,
        vector: encodeFloat32Base64(rowOf(data, DIM, b * BATCH + j)),
        metadata: metadata(b * BATCH + j),
      })),
    }),
  ),
);
const server = await startChildServer();
const token = (await server.post('/token', '')).token as string;
const t0 = performance.now();
for (const body of bodies) await server.post('/vectors/add-many', body, token);
console.log(`fill ${((performance.now() - t0) / 1000).toFixed(2)} s`);
await server.stop();
