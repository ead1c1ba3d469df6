// bench:ingest's export/import part: a session of `n` x `dim` in a child
// server (the compiled dist/, as `npm start` runs it), moved three ways:
// add-many of base64 batches of 1000 (the alternative), GET /vectors/export
// (base64 and JSON numbers) read as fast as the client can, and POST
// /vectors/import of the base64 export into a new session. Each is timed
// with MB/s of body, vectors/s and the server's peak RSS during it (VmHWM,
// reset before each case through /proc/<pid>/clear_refs). Then the p50 and
// p99 of a small session's searches (1000 x dim, topK 10, one at a time),
// alone and while a base64 export of the large session streams.
import { writeFileSync } from 'node:fs';
import { performance } from 'node:perf_hooks';
import { encodeFloat32Base64 } from '../../src/schemas/base64-float32.js';
import { startChildServer, type ChildServer } from './child-server.js';
import { rowOf, uniformVectors } from './data.js';

const MB = 1024 * 1024;

/** Reset the server's peak RSS (Linux: writing 5 to clear_refs resets VmHWM). */
function resetPeak(child: ChildServer): void {
  writeFileSync(`/proc/${child.child.pid}/clear_refs`, '5');
}

function addManyBodies(n: number, dim: number, seed: number): Buffer[] {
  const data = uniformVectors(n, dim, seed);
  const bodies: Buffer[] = [];
  for (let i = 0; i < n; i += 1000) {
    const vectors = [];
    for (let j = i; j < Math.min(n, i + 1000); j++) vectors.push({ id: `doc-${j}`, vector: encodeFloat32Base64(rowOf(data, dim, j)), metadata: { n: j % 10 } });
    bodies.push(Buffer.from(JSON.stringify({ vectors })));
  }
  return bodies;
}

async function exportBody(child: ChildServer, token: string, encoding: string): Promise<Buffer> {
  const res = await child.pool.request({ method: 'GET', path: `/vectors/export?vectorEncoding=${encoding}`, headers: { authorization: `Bearer ${token}` } });
  if (res.statusCode !== 200) throw new Error(`export: ${res.statusCode} ${await res.body.text()}`);
  const chunks: Buffer[] = [];
  for await (const chunk of res.body) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

async function importBody(child: ChildServer, token: string, body: Buffer): Promise<void> {
  const res = await child.pool.request({
    method: 'POST',
    path: '/vectors/import',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/x-ndjson' },
    body,
  });
  const text = await res.body.text();
  if (res.statusCode !== 200) throw new Error(`import: ${res.statusCode} ${text.slice(0, 300)}`);
}

export interface TransferRow {
  case: string;
  ms: number;
  'MB/s': string;
  'vectors/s': number;
  'body MB': string;
  'peak RSS MB (server)': string;
}

const percentile = (xs: number[], p: number) => {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
};

export async function benchExportImport(n: number, dim: number) {
  const child = await startChildServer({ MAX_VECTORS_PER_SESSION: String(n), MAX_IMPORT_BYTES: String(2048 * MB), REQUEST_RATE_PER_SEC: '0' });
  try {
    const rows: TransferRow[] = [];
    const row = (name: string, ms: number, bytes: number) =>
      rows.push({
        case: name,
        ms: Math.round(ms),
        'MB/s': (bytes / MB / (ms / 1000)).toFixed(1),
        'vectors/s': Math.round(n / (ms / 1000)),
        'body MB': (bytes / MB).toFixed(1),
        'peak RSS MB (server)': (child.rss().peak / MB).toFixed(0),
      });

    const bodies = addManyBodies(n, dim, 61);
    const source = (await child.post('/token', '')).token as string;
    resetPeak(child);
    let t0 = performance.now();
    for (const body of bodies) await child.post('/vectors/add-many', body, source);
    row(
      `add-many base64, ${bodies.length} x 1000 (the alternative)`,
      performance.now() - t0,
      bodies.reduce((s, b) => s + b.length, 0),
    );

    resetPeak(child);
    t0 = performance.now();
    const base64 = await exportBody(child, source, 'base64');
    row('export base64', performance.now() - t0, base64.length);

    resetPeak(child);
    t0 = performance.now();
    const numbers = await exportBody(child, source, 'numbers');
    row('export JSON numbers', performance.now() - t0, numbers.length);

    const target = (await child.post('/token', '')).token as string;
    resetPeak(child);
    t0 = performance.now();
    await importBody(child, target, base64);
    row('import base64 export', performance.now() - t0, base64.length);
    const again = await exportBody(child, target, 'base64');
    if (!again.equals(base64)) throw new Error('the imported session exports differently');

    // A small session's searches alone, then while the large session's export streams.
    const small = (await child.post('/token', '')).token as string;
    const smallData = uniformVectors(1000, dim, 62);
    await child.post(
      '/vectors/add-many',
      JSON.stringify({ vectors: Array.from({ length: 1000 }, (_, i) => ({ id: `s${i}`, vector: encodeFloat32Base64(rowOf(smallData, dim, i)) })) }),
      small,
    );
    const query = JSON.stringify({ queryVector: encodeFloat32Base64(rowOf(smallData, dim, 7)), topK: 10 });
    const searchOnce = async () => {
      const s0 = performance.now();
      await child.post('/search', query, small);
      return performance.now() - s0;
    };
    const alone: number[] = [];
    for (let i = 0; i < 300; i++) alone.push(await searchOnce());
    const during: number[] = [];
    let exporting = true;
    const exportDone = exportBody(child, source, 'base64').finally(() => {
      exporting = false;
    });
    const e0 = performance.now();
    while (exporting && performance.now() - e0 < 120_000) during.push(await searchOnce());
    const exportMs = performance.now() - e0;
    await exportDone;
    const searches = [
      {
        case: 'small session search, alone',
        searches: alone.length,
        'p50 ms': percentile(alone, 0.5).toFixed(2),
        'p99 ms': percentile(alone, 0.99).toFixed(2),
        'max ms': Math.max(...alone).toFixed(2),
      },
      {
        case: `same, while the base64 export streams (${Math.round(exportMs)} ms)`,
        searches: during.length,
        'p50 ms': percentile(during, 0.5).toFixed(2),
        'p99 ms': percentile(during, 0.99).toFixed(2),
        'max ms': Math.max(...during).toFixed(2),
      },
    ];
    return { rows, searches, p99Ratio: percentile(during, 0.99) / percentile(alone, 0.99) };
  } finally {
    await child.stop();
  }
}
