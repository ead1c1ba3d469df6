// npm run bench:peers: one exact cosine query (top 10) over N x dim float32
// vectors, in one process: our WASM kernel (the service's KernelInstance),
// a plain TypeScript loop, usearch's native exactSearch (one thread, like
// ours, and on all threads) on the same Float32Array, and a SIMD pass that only reads the stored
// bytes (the memory floor: one stream, and four streams as the scan reads the
// rows). Ids are checked equal before timing counts.
// Then 100k x 384 against FAISS and LanceDB (bench/peers/compare.ts).
import usearch from 'usearch';
import { rowOf, uniformVectors } from './lib/data.js';
import { filledKernel } from './lib/kernel-setup.js';
import { fmt, interleave, printTable, quick } from './lib/measure.js';
import { writeResults } from './lib/results.js';
import { comparePeers } from './peers/compare.js';
import { invNormsOf, plainSearch, sameIds } from './lib/plain.js';
import { RawKernel } from './lib/raw-kernel.js';

const K = 10;
const QUERIES = 8;
const sizes = quick ? [2_000] : [10_000, 100_000];
const dims = quick ? [128] : [128, 384, 1024];

/** `threads`: 0 is every thread the machine has. */
function usearchSearch(data: Float32Array, query: Float32Array, dim: number, threads = 1) {
  return usearch.exactSearch(data, query, dim, K, usearch.MetricKind.Cos, threads);
}

// usearch reads a query from the start of its ArrayBuffer (a subarray's
// byteOffset is ignored), so every query gets a buffer of its own.
const ownQueries = (n: number, dim: number, seed: number) => Array.from({ length: n }, (_, i) => rowOf(uniformVectors(n, dim, seed), dim, i).slice());

function checkEqual(n: number, dim: number, data: Float32Array, queries: Float32Array[], kernel: ReturnType<typeof filledKernel>) {
  const invNorms = invNormsOf(data, dim, n);
  for (let q = 0; q < QUERIES; q++) {
    const query = queries[q];
    const ours = kernel.search({ queries: query, queryCount: 1, k: K, count: n });
    const peer = usearchSearch(data, query, dim);
    const peerIds = Array.from(peer.keys, Number);
    if (Array.from(usearchSearch(data, query, dim, 0).keys, Number).join() !== peerIds.join()) {
      throw new Error(`${n} x ${dim}, query ${q}: usearch on all threads differs from one thread`);
    }
    if (
      !sameIds(
        ours.rows,
        peerIds,
        ours.scores,
        Array.from(peer.distances, (d) => 1 - d),
        1e-4,
      )
    ) {
      throw new Error(`${n} x ${dim}, query ${q}: usearch ids ${peerIds} differ from ours ${Array.from(ours.rows)}`);
    }
    const plain = plainSearch(data, dim, n, invNorms, query, K, 'cosine');
    if (!sameIds(ours.rows, plain.rows)) throw new Error(`${n} x ${dim}, query ${q}: plain TS ids differ`);
  }
  return invNorms;
}

const rows: Record<string, string | number>[] = [];
for (const n of sizes) {
  for (const dim of dims) {
    const data = uniformVectors(n, dim, 100 + dim);
    const queries = ownQueries(QUERIES, dim, 200 + dim);
    const kernel = filledKernel(data, dim, 'cosine');
    const raw = new RawKernel(data, dim);
    const invNorms = checkEqual(n, dim, data, queries, kernel);
    let q = 0;
    const next = () => queries[q++ % QUERIES];
    const [wasm, plain, peer, peerAll, floor, floor4] = interleave(
      [
        { name: 'wasm', run: () => kernel.search({ queries: next(), queryCount: 1, k: K, count: n }) },
        { name: 'plain-ts', run: () => plainSearch(data, dim, n, invNorms, next(), K, 'cosine') },
        { name: 'usearch', run: () => usearchSearch(data, next(), dim) },
        { name: 'usearch all threads', run: () => usearchSearch(data, next(), dim, 0) },
        { name: 'floor', run: () => raw.readFloor() },
        { name: 'floor4', run: () => raw.readFloor4() },
      ],
      { rounds: 7, targetMs: 120 },
    );
    rows.push({
      vectors: n,
      dim,
      'wasm ms': wasm.ms,
      'usearch ms': peer.ms,
      'usearch all ms': peerAll.ms,
      'plain-ts ms': plain.ms,
      'floor ms': floor.ms,
      'wasm/usearch': fmt(wasm.ms / peer.ms, 2),
      'wasm/usearch all': fmt(wasm.ms / peerAll.ms, 2),
      'wasm/floor': fmt(wasm.ms / floor.ms, 2),
      'wasm/floor4': fmt(wasm.ms / floor4.ms, 2),
      'wasm/plain-ts': fmt(wasm.ms / plain.ms, 3),
    });
    console.error(`done ${n} x ${dim}`);
  }
}
printTable(rows);
const peers = await comparePeers(K);
console.log(`results: ${writeResults('peers', { topK: K, metric: 'cosine', usearchThreads: [1, 'all'], rows, peers, tables: { rows, peers: peers?.rows } })}`);
