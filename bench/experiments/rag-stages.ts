// One-off: the server's steps for one add-many of 500 bench:rag records
// (base64 vectors, ~1.5 KB metadata each), with and without metadata, timed
// alone (bench/lib/ingest-stages.ts) on this build's dist/ and, with
// `--dist name=<dir>`, on other builds in the same run.
import { encodeFloat32Base64 } from '../../src/schemas/base64-float32.js';
import { rowOf, uniformVectors } from '../lib/data.js';
import { ensureBuiltServer } from '../lib/child-server.js';
import { timeStages } from '../lib/ingest-stages.js';
import { chunkMetadata } from '../lib/rag-data.js';

ensureBuiltServer();
const dists: Record<string, string> = { 'this tree': new URL('../../dist', import.meta.url).pathname };
process.argv.forEach((arg, i) => {
  if (arg !== '--dist') return;
  const [name, dir] = process.argv[i + 1].split('=');
  dists[name] = dir;
});
const data = uniformVectors(500, 384, 1);
const body = (withMetadata: boolean) =>
  Buffer.from(
    JSON.stringify({
      vectors: Array.from({ length: 500 }, (_, i) =>
        withMetadata
          ? { id: `c${i}`, vector: encodeFloat32Base64(rowOf(data, 384, i)), metadata: chunkMetadata(i) }
          : { id: `c${i}`, vector: encodeFloat32Base64(rowOf(data, 384, i)) },
      ),
    }),
  );
for (const withMetadata of [false, true]) {
  console.log(withMetadata ? 'with metadata (median ms)' : 'without metadata (median ms)');
  for (const [name, times] of Object.entries(await timeStages(dists, body(withMetadata), 40))) {
    console.log(
      `  ${name.padEnd(16)} ${Object.entries(times)
        .map(([stage, ms]) => `${stage} ${ms.toFixed(2)}`)
        .join('  ')}`,
    );
  }
}
