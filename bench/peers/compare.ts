// bench:peers at 100k x 384 (cosine, top k): tempvec on one thread (the
// inline kernel) and on all threads (KernelPool over the shared build),
// usearch exactSearch, FAISS IndexFlatIP (a child process) and LanceDB flat
// search, for 1, 16 and 64 queries and one query with a 1% filter, rounds
// interleaved. Every peer's ids are checked against tempvec's exact answer
// (recall@k printed) before its figures count; a peer not installed is
// skipped with the reason.
import { availableParallelism } from 'node:os';
import usearch from 'usearch';
import { KernelPool } from '../../src/kernel/kernel-pool.js';
import { TILE_PASS_QUERIES } from '../../src/kernel/layout.js';
import { loadSharedKernelModule } from '../../src/kernel/load-node.js';
import { uniformVectors } from '../lib/data.js';
import { filledKernel } from '../lib/kernel-setup.js';
import { fmt, interleaveTimed, printTable, quick, timeCalls, type TimedCase } from '../lib/measure.js';
import { invNormsOf, plainSearch, sameIds } from '../lib/plain.js';
import { RawKernel } from '../lib/raw-kernel.js';
import { FaissFlat, type FaissThreads } from './faiss-flat.js';
import { LanceFlat } from './lancedb-flat.js';
import { onPool } from '../../src/kernel/executor.js';

const N = quick ? 5_000 : 100_000;
const DIM = 384;
const MANY = 64;
const BATCHES = [1, 16, MANY];
/** LanceDB takes some 0.4 s a query: its recall is checked on a few. */
const LANCE_CHECKS = 4;
const FILTER = 'bucket = 7';
const ROUNDS = quick ? 3 : 5;

/**
 * FAISS's thread settings: one thread; every thread for OpenMP (queries and
 * top-k heaps) and OpenBLAS (the sgemm) alike; every thread for OpenBLAS only.
 */
function faissSettings(threads: number): (FaissThreads & { name: string })[] {
  const one = { name: 'FAISS 1t', omp: 1, blas: 1 };
  if (threads === 1) return [one];
  return [one, { name: `FAISS ${threads}t`, omp: threads, blas: threads }, { name: `FAISS ${threads}t BLAS`, omp: 1, blas: threads }];
}

/** Mean share of `want`'s k ids per query that `got` has too. */
function recall(want: Int32Array, got: ArrayLike<number>[], k: number): number {
  let hits = 0;
  got.forEach((ids, q) => {
    const expected = new Set(want.subarray(q * k, (q + 1) * k));
    for (let i = 0; i < k; i++) if (expected.has(ids[i])) hits++;
  });
  return hits / (got.length * k);
}

function perQuery(ids: ArrayLike<number | bigint>, k: number, nq: number): number[][] {
  const all = Array.from(ids, Number);
  return Array.from({ length: nq }, (_, q) => all.slice(q * k, (q + 1) * k));
}

/** A recall row; below 0.99 a peer does not give the exact answer, and its times compare unlike work. */
const recallRow = (peer: string, queries: number, value: number, k: number) => ({
  peer,
  queries,
  [`recall@${k}`]: fmt(value),
  'exact answer': value >= 0.99 ? 'yes' : 'NO: times not like for like',
});

export async function comparePeers(k: number) {
  const threads = availableParallelism();
  const data = uniformVectors(N, DIM, 484);
  const queries = uniformVectors(MANY, DIM, 684);
  // Rows with r % 100 == 7: the rows LanceDB's filter keeps, as tempvec's row list.
  const filtered = Int32Array.from({ length: Math.ceil((N - 7) / 100) }, (_, i) => i * 100 + 7);
  const oneThread = filledKernel(data, DIM, 'cosine');
  const sharedKernel = filledKernel(data, DIM, 'cosine', 'float32', loadSharedKernelModule());
  const pool = new KernelPool(threads, loadSharedKernelModule());

  const exact = oneThread.search({ queries, queryCount: MANY, k, count: N });
  const exactFiltered = oneThread.search({ queries: queries.subarray(0, LANCE_CHECKS * DIM), queryCount: LANCE_CHECKS, k, count: N, rowList: filtered });
  const invNorms = invNormsOf(data, DIM, N);
  for (let q = 0; q < 2; q++) {
    const plain = plainSearch(data, DIM, N, invNorms, queries.subarray(q * DIM, (q + 1) * DIM), k, 'cosine');
    if (!sameIds(exact.rows.subarray(q * k, (q + 1) * k), plain.rows)) throw new Error(`query ${q}: tempvec differs from the plain TS loop`);
  }
  for (const nq of BATCHES) {
    const got = await sharedKernel.search({ queries: queries.subarray(0, nq * DIM), queryCount: nq, k, count: N }, onPool(pool));
    if (got.rows.join() !== exact.rows.subarray(0, nq * k).join()) throw new Error(`${nq} queries: the pool differs from one thread`);
  }
  const poolFiltered = await sharedKernel.search(
    { queries: queries.subarray(0, LANCE_CHECKS * DIM), queryCount: LANCE_CHECKS, k, count: N, rowList: filtered },
    onPool(pool),
  );
  if (poolFiltered.rows.join() !== exactFiltered.rows.join()) throw new Error('filtered: the pool differs from one thread');

  const skipped: Record<string, string> = {};
  let faiss: FaissFlat | { skip: string } = { skip: 'not started' };
  let lance: LanceFlat | { skip: string } = { skip: 'not started' };
  const recalls: Record<string, string | number>[] = [];
  const closePeers = () => {
    if (!('skip' in faiss)) faiss.close();
    if (!('skip' in lance)) lance.close();
  };
  // Ctrl-C: the peers' temporary copies of the data go too.
  const interrupted = () => {
    closePeers();
    process.exit(130);
  };
  process.once('SIGINT', interrupted);
  try {
    faiss = await FaissFlat.start(data, queries, DIM, k);
    if ('skip' in faiss) skipped.FAISS = faiss.skip;
    lance = await LanceFlat.start(data, DIM);
    if ('skip' in lance) skipped.LanceDB = lance.skip;
    const sixteen = usearch.exactSearch(data, queries.slice(0, 16 * DIM), DIM, k, usearch.MetricKind.Cos, 0);
    recalls.push(recallRow('usearch exactSearch', 16, recall(exact.rows, perQuery(sixteen.keys, k, 16), k), k));
    if (!('skip' in faiss)) {
      recalls.push(recallRow(`FAISS ${faiss.info.faiss} IndexFlatIP`, MANY, recall(exact.rows, await faiss.ids(MANY), k), k));
    }
    if (!('skip' in lance)) {
      const plainIds: number[][] = [],
        whereIds: number[][] = [];
      for (let q = 0; q < LANCE_CHECKS; q++) {
        const query = queries.slice(q * DIM, (q + 1) * DIM);
        plainIds.push(await lance.search(query, k));
        whereIds.push(await lance.search(query, k, FILTER));
      }
      recalls.push(recallRow(`LanceDB ${lance.version} flat`, LANCE_CHECKS, recall(exact.rows, plainIds, k), k));
      recalls.push(recallRow(`LanceDB ${lance.version} flat, where ${FILTER}`, LANCE_CHECKS, recall(exactFiltered.rows, whereIds, k), k));
    }

    const faissThreads = faissSettings(threads);
    const [withFaiss, withLance] = ['skip' in faiss ? null : faiss, 'skip' in lance ? null : lance];
    const rows: Record<string, string | number>[] = [];
    // A pass that only reads the rows: what one pass of search-many's tiles costs at least.
    const raw = new RawKernel(data, DIM);
    let floorMs = NaN;
    const col = (ms: number | undefined) => (ms === undefined ? '-' : fmt(ms));
    for (const nq of [...BATCHES, 0]) {
      const count = nq || 1;
      const batch = queries.slice(0, count * DIM); // its own buffer: usearch reads from offset 0
      const rowList = nq ? null : filtered;
      const cases: TimedCase[] = [
        { name: 'tempvec 1t', time: timeCalls(() => oneThread.search({ queries: batch, queryCount: count, k, count: N, rowList })) },
        { name: 'tempvec all', time: timeCalls(() => sharedKernel.search({ queries: batch, queryCount: count, k, count: N, rowList }, onPool(pool))) },
      ];
      // usearch's exactSearch takes the queries one by one (16 cost 16 single
      // ones): left out at 64, where it would take most of the bench's time.
      if (nq && nq < MANY) {
        cases.push({ name: 'usearch 1t', time: timeCalls(() => usearch.exactSearch(data, batch, DIM, k, usearch.MetricKind.Cos, 1)) });
        cases.push({ name: 'usearch all', time: timeCalls(() => usearch.exactSearch(data, batch, DIM, k, usearch.MetricKind.Cos, 0)) });
      }
      if (nq && withFaiss) for (const t of faissThreads) cases.push({ name: t.name, time: (calls) => withFaiss.time(nq, t, calls) });
      if (nq === MANY) cases.push({ name: 'read floor', time: timeCalls(() => raw.readFloor()) });
      if (withLance && count === 1) cases.push({ name: 'LanceDB', time: timeCalls(() => withLance.search(batch, k, nq ? undefined : FILTER)) });
      const timings = await interleaveTimed(cases, { rounds: ROUNDS, targetMs: 100 });
      const ms = (name: string) => timings.find((t) => t.name === name)?.ms;
      if (nq === MANY) floorMs = ms('read floor')!;
      const faissBest = Math.min(...faissThreads.map((t) => ms(t.name) ?? Infinity));
      rows.push({
        case: nq ? `${nq} quer${nq === 1 ? 'y' : 'ies'}` : `1 query, ${FILTER} (1%)`,
        'tempvec 1t ms': col(ms('tempvec 1t')),
        [`tempvec ${threads}t ms`]: col(ms('tempvec all')),
        'usearch 1t ms': col(ms('usearch 1t')),
        [`usearch ${threads}t ms`]: col(ms('usearch all')),
        ...Object.fromEntries(faissThreads.map((t) => [`${t.name} ms`, col(ms(t.name))])),
        'LanceDB ms': col(ms('LanceDB')),
        [`tempvec ${threads}t / FAISS best`]: Number.isFinite(faissBest) ? fmt(ms('tempvec all')! / faissBest, 2) : '-',
        'tempvec 1t / FAISS 1t': ms('FAISS 1t') ? fmt(ms('tempvec 1t')! / ms('FAISS 1t')!, 2) : '-',
        [`tempvec ${threads}t / LanceDB`]: ms('LanceDB') ? fmt(ms('tempvec all')! / ms('LanceDB')!, 4) : '-',
      });
      console.error(`done ${count} x ${N} x ${DIM}${nq ? '' : ' filtered'}`);
    }

    console.log(`\n${N / 1000}k x ${DIM}, cosine, top ${k}: tempvec on 1 and ${threads} threads (KernelPool), beside native peers`);
    for (const [peer, why] of Object.entries(skipped)) console.log(`skipped ${peer}: ${why}`);
    printTable(recalls);
    printTable(rows);
    const summary = explainGap(
      rows,
      threads,
      faiss,
      faissThreads.map((t) => t.name),
      floorMs,
    );
    for (const line of summary) console.log(line);
    return { vectors: N, dim: DIM, threads, faiss: 'skip' in faiss ? null : faiss.info, skipped, recalls, rows, summary };
  } finally {
    process.off('SIGINT', interrupted);
    closePeers();
    await pool.close();
  }
}

/**
 * The goal's line, and where the gap to FAISS at 64 queries comes from:
 * arithmetic per thread (GFLOP/s) against the memory floor of the passes
 * tempvec makes over the rows (TILE_PASS_QUERIES queries a pass).
 */
function explainGap(
  rows: Record<string, string | number>[],
  threads: number,
  faiss: FaissFlat | { skip: string },
  faissNames: string[],
  floorMs: number,
): string[] {
  const row = rows.find((r) => r.case === `${MANY} queries`)!;
  const ms = (name: string) => Number(row[`${name} ms`]);
  const gflops = (name: string) => fmt((2 * N * DIM * MANY) / (ms(name) * 1e6), 1);
  const perQuery = (name: string) => fmt(ms(name) / MANY);
  const all = `tempvec ${threads}t`;
  const passes = Math.ceil(MANY / TILE_PASS_QUERIES);
  const lines = [
    `search-many ${MANY}, a query: tempvec ${perQuery('tempvec 1t')} ms on 1 thread, ${perQuery(all)} ms on ${threads} (${fmt(ms('tempvec 1t') / ms(all), 2)}x);` +
      ` its ${passes} passes over the rows at the read floor: ${fmt(passes * floorMs, 1)} ms of its ${fmt(ms('tempvec 1t'), 1)} on one thread (compute-bound)`,
  ];
  if ('skip' in faiss) return lines;
  const best = faissNames.reduce((a, b) => (ms(b) < ms(a) ? b : a));
  const ratio = ms(all) / ms(best);
  lines.push(
    `goal: search-many ${MANY} on ${N / 1000}k x ${DIM}, tempvec on all threads <= 1.0x FAISS's best (${best}, ${perQuery(best)} ms a query): ${fmt(ratio, 2)}x, ${ratio <= 1 ? 'met' : 'not met'}`,
  );
  lines.push(
    `per thread: tempvec ${gflops('tempvec 1t')} GFLOP/s, FAISS ${gflops('FAISS 1t')} GFLOP/s (${fmt(ms('tempvec 1t') / ms('FAISS 1t'), 2)}x the time):` +
      ` FAISS's sgemm (OpenBLAS ${faiss.info.blasCore} kernels) does 8 fused multiply-adds per 256-bit instruction;` +
      ' WASM has 128-bit SIMD (4 lanes) and tempvec multiplies, then adds (no FMA: each query gets the sums of the one-query scan)',
  );
  return lines;
}
