// The kernel pool: searches split over 1, 2 and 3 threads give exactly
// search()'s rows, scores and order; a killed thread fails only its call.
import { readdirSync, readFileSync } from 'node:fs';
import { expect } from 'chai';
import fc from 'fast-check';
import type { Metric, VectorType } from '../../src/config.js';
import { KernelInstance } from '../../src/kernel/kernel-instance.js';
import { KernelPool, KernelUnavailableError } from '../../src/kernel/kernel-pool.js';
import { loadKernelModule, loadSharedKernelModule } from '../../src/kernel/load-node.js';
import { scaled } from '../helpers/scale.js';
import { onPool } from '../../src/kernel/executor.js';

function filled(
  module: WebAssembly.Module,
  dim: number,
  metric: Metric,
  rows: Float32Array[],
  seqs: number[],
  vectorType: VectorType = 'float32',
): KernelInstance {
  const kernel = new KernelInstance(module, dim, metric, Math.max(1, rows.length), vectorType);
  kernel.ensureCapacity(rows.length);
  rows.forEach((row, r) => {
    kernel.writeRows([r], [row], seqs[r]);
  });
  return kernel;
}

/**
 * Rows of small integer components (many equal rows and exact ties), shuffled
 * insertion sequences, queries, and a row list for a filter.
 */
function randomCase(
  values: fc.Stream<number>,
  { metric, dim, n, queryCount, filtered, seed }: { metric: Metric; dim: number; n: number; queryCount: number; filtered: boolean; seed: number },
) {
  const it = values[Symbol.iterator]();
  const next = () => it.next().value as number;
  const rows = Array.from({ length: n }, () => Float32Array.from({ length: dim }, next));
  if (metric === 'cosine') for (const row of rows) if (row.every((x) => x === 0)) row[0] = 1;
  const seqs = Array.from({ length: n }, (_, r) => (r * 7919 + seed) % (n * 2));
  const queries = Float32Array.from({ length: queryCount * dim }, () => next() || 1);
  const rowList = filtered ? Int32Array.from(Array.from({ length: n }, (_, r) => r).filter((r) => (r * 31 + seed) % 3 !== 0)) : null;
  return { rows, seqs, queries, rowList };
}

describe('kernel pool', function () {
  this.timeout(180_000);
  const pools = [1, 2, 3].map((threads) => new KernelPool(threads, loadSharedKernelModule()));
  after(() => Promise.all(pools.map((pool) => pool.close())));

  it("gives search()'s results on 1, 2 and 3 threads, ties and filters included", async () => {
    const small = fc.integer({ min: -3, max: 3 });
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          metric: fc.constantFrom<Metric>('cosine', 'l2'),
          dim: fc.integer({ min: 1, max: 40 }),
          n: fc.integer({ min: 1, max: 400 }),
          queryCount: fc.integer({ min: 1, max: 20 }),
          k: fc.integer({ min: 1, max: 40 }),
          filtered: fc.boolean(),
          seed: fc.integer({ min: 0, max: 1 << 30 }),
          // Calls of this much work at most: from one per thread down to the most slices.
          sliceWork: fc.integer({ min: 1, max: 400_000 }),
        }),
        fc.infiniteStream(small),
        async ({ metric, dim, n, queryCount, k, filtered, seed, sliceWork }, values) => {
          const { rows, seqs, queries, rowList } = randomCase(values, { metric, dim, n, queryCount, filtered, seed });
          const inline = filled(loadKernelModule(), dim, metric, rows, seqs).search({ queries, queryCount, k, count: n, rowList });
          for (const pool of pools) {
            const shared = filled(loadSharedKernelModule(), dim, metric, rows, seqs);
            const got = await shared.search({ queries, queryCount, k, count: n, rowList }, onPool(pool, sliceWork));
            pool.release(shared.id);
            expect(Array.from(got.rows), `${pool.size} threads`).to.deep.equal(Array.from(inline.rows));
            expect(Array.from(got.scores), `${pool.size} threads`).to.deep.equal(Array.from(inline.scores));
          }
        },
      ),
      { numRuns: scaled(60, 5) },
    );
  });

  it("gives the int8 search's one-thread results on 1, 2 and 3 threads, pools and filters included", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.record({
          metric: fc.constantFrom<Metric>('cosine', 'l2'),
          dim: fc.integer({ min: 1, max: 70 }),
          n: fc.integer({ min: 1, max: 300 }),
          queryCount: fc.integer({ min: 1, max: 12 }),
          k: fc.integer({ min: 1, max: 20 }),
          extra: fc.integer({ min: 0, max: 300 }),
          filtered: fc.boolean(),
          seed: fc.integer({ min: 0, max: 1 << 30 }),
          // Calls of this much work at most: a query's first stage from one range per thread down to ranges of 8 rows.
          sliceWork: fc.integer({ min: 1, max: 10_000 }),
        }),
        fc.infiniteStream(fc.integer({ min: -4, max: 4 })),
        async ({ metric, dim, n, queryCount, k, extra, filtered, seed, sliceWork }, values) => {
          const { rows, seqs, queries, rowList } = randomCase(values, { metric, dim, n, queryCount, filtered, seed });
          const poolSize = k + extra;
          const inline = filled(loadKernelModule(), dim, metric, rows, seqs, 'int8').search({
            queries,
            queryCount,
            k,
            candidatePool: poolSize,
            count: n,
            rowList,
          });
          for (const pool of pools) {
            const shared = filled(loadSharedKernelModule(), dim, metric, rows, seqs, 'int8');
            const got = await shared.search({ queries, queryCount, k, candidatePool: poolSize, count: n, rowList }, onPool(pool, sliceWork));
            pool.release(shared.id);
            expect(Array.from(got.rows), `${pool.size} threads`).to.deep.equal(Array.from(inline.rows));
            expect(Array.from(got.scores), `${pool.size} threads`).to.deep.equal(Array.from(inline.scores));
          }
        },
      ),
      { numRuns: scaled(40, 5) },
    );
  });

  it('splits large single queries and search-many over the threads exactly', async () => {
    const dim = 64,
      n = 5000;
    const rows = Array.from({ length: n }, (_, r) => Float32Array.from({ length: dim }, (_, i) => Math.sin(r * 0.37 + i) * ((r % 5) + 1)));
    const seqs = Array.from({ length: n }, (_, r) => n - r);
    for (const metric of ['cosine', 'l2'] as const) {
      const inline = filled(loadKernelModule(), dim, metric, rows, seqs);
      const shared = filled(loadSharedKernelModule(), dim, metric, rows, seqs);
      for (const [queryCount, k] of [
        [1, 10],
        [1, 100],
        [64, 10],
      ]) {
        const queries = Float32Array.from({ length: queryCount * dim }, (_, i) => Math.cos(i * 0.11));
        const want = inline.search({ queries, queryCount, k, count: n });
        for (const pool of pools) {
          const got = await shared.search({ queries, queryCount, k, count: n }, onPool(pool));
          expect(Array.from(got.rows)).to.deep.equal(Array.from(want.rows));
          expect(Array.from(got.scores)).to.deep.equal(Array.from(want.scores));
        }
      }
      for (const pool of pools) pool.release(shared.id);
    }
  });

  it('splits large single int8 queries over the threads by rows exactly: pools selected after the scan, filters', async () => {
    const dim = 96,
      n = 6000;
    const rows = Array.from({ length: n }, (_, r) => Float32Array.from({ length: dim }, (_, i) => Math.sin(r * 0.37 + i) * ((r % 5) + 1)));
    const seqs = Array.from({ length: n }, (_, r) => (r * 7919) % n);
    const rowList = Int32Array.from(Array.from({ length: n }, (_, r) => r).filter((r) => r % 3 !== 1));
    for (const metric of ['cosine', 'l2'] as const) {
      const inline = filled(loadKernelModule(), dim, metric, rows, seqs, 'int8');
      const shared = filled(loadSharedKernelModule(), dim, metric, rows, seqs, 'int8');
      for (const [queryCount, k, poolSize, list] of [
        [1, 10, 100, null],
        [1, 10, 300, null],
        [1, 50, 300, rowList],
        [2, 10, 256, rowList],
      ] as const) {
        const queries = Float32Array.from({ length: queryCount * dim }, (_, i) => Math.cos(i * 0.11));
        const want = inline.search({ queries, queryCount, k, candidatePool: poolSize, count: n, rowList: list });
        for (const pool of pools) {
          const jobsBefore = pool.jobsRun;
          const got = await shared.search({ queries, queryCount, k, candidatePool: poolSize, count: n, rowList: list }, onPool(pool));
          expect(Array.from(got.rows), `${metric} pool ${poolSize} on ${pool.size}`).to.deep.equal(Array.from(want.rows));
          expect(Array.from(got.scores), `${metric} pool ${poolSize} on ${pool.size}`).to.deep.equal(Array.from(want.scores));
          // One call per range (and per query below the threads), each scanning part of the rows.
          expect(pool.jobsRun - jobsBefore, `calls on ${pool.size}`).to.be.at.least(Math.max(queryCount, pool.size));
        }
      }
      for (const pool of pools) pool.release(shared.id);
    }
  });

  it("gives the int8 search's one-thread results for more queries than jobs (several first stages and re-rankings a job)", async () => {
    const dim = 40,
      n = 500,
      queryCount = 150;
    const rows = Array.from({ length: n }, (_, r) => Float32Array.from({ length: dim }, (_, i) => Math.sin(r * 0.53 + i * 0.9) * ((r % 3) + 1)));
    const seqs = Array.from({ length: n }, (_, r) => (r * 31) % n);
    const rowList = Int32Array.from(Array.from({ length: n }, (_, r) => r).filter((r) => r % 4 !== 2));
    const queries = Float32Array.from({ length: queryCount * dim }, (_, i) => Math.cos(i * 0.37));
    for (const metric of ['cosine', 'l2'] as const) {
      const inline = filled(loadKernelModule(), dim, metric, rows, seqs, 'int8');
      const shared = filled(loadSharedKernelModule(), dim, metric, rows, seqs, 'int8');
      for (const list of [null, rowList]) {
        const want = inline.search({ queries, queryCount, k: 7, candidatePool: 60, count: n, rowList: list });
        // A query's hits do not depend on the others it came with.
        for (let q = 0; q < queryCount; q += 7) {
          const alone = inline.search({ queries: queries.subarray(q * dim, (q + 1) * dim), queryCount: 1, k: 7, candidatePool: 60, count: n, rowList: list });
          expect(Array.from(want.rows.subarray(q * 7, (q + 1) * 7)), `${metric} query ${q}`).to.deep.equal(Array.from(alone.rows));
        }
        for (const pool of pools) {
          const got = await shared.search({ queries, queryCount, k: 7, candidatePool: 60, count: n, rowList: list }, onPool(pool));
          expect(Array.from(got.rows), `${metric} on ${pool.size}`).to.deep.equal(Array.from(want.rows));
          expect(Array.from(got.scores), `${metric} on ${pool.size}`).to.deep.equal(Array.from(want.scores));
        }
      }
      for (const pool of pools) pool.release(shared.id);
    }
  });

  it('runs searches of one instance side by side, each in its own scratch', async () => {
    const dim = 48,
      n = 3000;
    const rows = Array.from({ length: n }, (_, r) => Float32Array.from({ length: dim }, (_, i) => Math.sin(r * 0.71 + i * 1.3)));
    const seqs = Array.from({ length: n }, (_, r) => r);
    const inline = filled(loadKernelModule(), dim, 'cosine', rows, seqs);
    const shared = filled(loadSharedKernelModule(), dim, 'cosine', rows, seqs);
    const pool = pools[1];
    const searches = Array.from({ length: 6 }, (_, j) => {
      const queryCount = [1, 5, 17][j % 3],
        k = [3, 10, 40][j % 3];
      const queries = Float32Array.from({ length: queryCount * dim }, (_, i) => Math.cos(i * 0.07 + j));
      return { queries, queryCount, k };
    });
    const running = searches.map(({ queries, queryCount, k }) => shared.search({ queries, queryCount, k, count: n }, onPool(pool, 20_000)));
    // An inline search while the pool's run: it must not touch their scratch, nor they its.
    const { queries, queryCount, k } = searches[2];
    expect(Array.from(shared.search({ queries, queryCount, k, count: n }).rows)).to.deep.equal(
      Array.from(inline.search({ queries, queryCount, k, count: n }).rows),
    );
    const answers = await Promise.all(running);
    searches.forEach(({ queries, queryCount, k }, j) => {
      const want = inline.search({ queries, queryCount, k, count: n });
      expect(Array.from(answers[j].rows), `search ${j}`).to.deep.equal(Array.from(want.rows));
      expect(Array.from(answers[j].scores), `search ${j}`).to.deep.equal(Array.from(want.scores));
    });
    pool.release(shared.id);
  });

  it('runs its threads at a lower priority than the event loop (Linux nice 5)', async function () {
    if (process.platform !== 'linux') this.skip();
    const pool = new KernelPool(2, loadSharedKernelModule());
    try {
      const shared = filled(loadSharedKernelModule(), 4, 'l2', [Float32Array.of(1, 2, 3, 4)], [0]);
      await shared.search({ queries: Float32Array.of(1, 1, 1, 1), queryCount: 1, k: 1, count: 1 }, onPool(pool));
      await shared.search({ queries: Float32Array.of(1, 1, 1, 1), queryCount: 1, k: 1, count: 1 }, onPool(pool));
      const niceOf = (task: string) => Number(readFileSync(`/proc/self/task/${task}/stat`, 'utf8').split(') ')[1].split(' ')[16]);
      const nices = readdirSync('/proc/self/task').map(niceOf);
      expect(nices.filter((nice) => nice === 5).length, 'threads at nice 5').to.be.at.least(pool.size);
      expect(niceOf(String(process.pid)), 'the main thread').to.equal(0);
    } finally {
      await pool.close();
    }
  });

  it('fails only the calls of a killed thread, and the next search succeeds', async () => {
    const pool = new KernelPool(1, loadSharedKernelModule());
    try {
      const dim = 256,
        n = 20000;
      const rows = Array.from({ length: n }, (_, r) => Float32Array.from({ length: dim }, (_, i) => ((r * 13 + i) % 17) - 8));
      const seqs = Array.from({ length: n }, (_, r) => r);
      const shared = filled(loadSharedKernelModule(), dim, 'l2', rows, seqs);
      const queries = Float32Array.from({ length: 64 * dim }, (_, i) => (i % 11) - 5);
      // A thread that has served: one that dies before it is ready is not replaced at once.
      await shared.search({ queries: queries.subarray(0, dim), queryCount: 1, k: 10, count: n }, onPool(pool));
      const running = shared.search({ queries, queryCount: 64, k: 10, count: n }, onPool(pool));
      await pool.workers[0].terminate();
      let failure: unknown;
      await running.catch((err) => {
        failure = err;
      });
      expect(failure).to.be.instanceOf(KernelUnavailableError);
      const want = filled(loadKernelModule(), dim, 'l2', rows, seqs).search({ queries: queries.subarray(0, dim), queryCount: 1, k: 10, count: n });
      const got = await shared.search({ queries: queries.subarray(0, dim), queryCount: 1, k: 10, count: n }, onPool(pool));
      expect(Array.from(got.rows)).to.deep.equal(Array.from(want.rows));
      expect(Array.from(got.scores)).to.deep.equal(Array.from(want.scores));
    } finally {
      await pool.close();
    }
  });
});
