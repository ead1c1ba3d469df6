// The relaxed-SIMD build (build/kernel.relaxed.wasm, KERNEL_BUILD=relaxed:
// every float32 multiply-add fused) against the float64 reference and the
// simd128 build, and search against search-many within it. Only where the
// engine runs relaxed SIMD (Node 22 and later; skipped on Node 20).
import { expect } from 'chai';
import type { Metric, VectorType } from '../../src/config.js';
import { KernelInstance } from '../../src/kernel/kernel-instance.js';
import { backendOf } from '../../src/kernel/kernel-module.js';
import { KernelPool } from '../../src/kernel/kernel-pool.js';
import { loadKernelModule, loadSharedKernelModule } from '../../src/kernel/load-node.js';
import { relaxedSimdSupported } from '../../src/kernel/relaxed-simd.js';
import { randomInt, randomVectors, seededRng } from '../helpers/random.js';
import { BUILDS_SCORE_BOUND, expectSameTopK, referenceScore } from '../helpers/reference.js';
import { sampled } from '../helpers/scale.js';
import { KernelModel } from './model.js';
import { onPool } from '../../src/kernel/executor.js';

const RELAXED = 'wasm-relaxed-simd';
const METRICS: Metric[] = ['cosine', 'l2'];

const runs = relaxedSimdSupported();
const skipped = runs ? '' : ` (skipped: Node ${process.version} does not run relaxed SIMD)`;

function filled(module: WebAssembly.Module, dim: number, metric: Metric, rows: number[][], vectorType: VectorType = 'float32'): KernelInstance {
  const kernel = new KernelInstance(module, dim, metric, rows.length, vectorType);
  kernel.ensureCapacity(rows.length);
  rows.forEach((row, r) => {
    kernel.writeRows([r], [Float32Array.from(row)], r);
  });
  return kernel;
}

describe(`the relaxed-SIMD kernel build${skipped}`, function () {
  this.timeout(180_000);
  before(function () {
    if (!runs) this.skip();
  });

  it('names itself wasm-relaxed-simd, the other build wasm-simd128, and exports the same functions', () => {
    const names = (module: WebAssembly.Module) =>
      WebAssembly.Module.exports(module)
        .map((e) => e.name)
        .sort();
    expect(backendOf(loadKernelModule(RELAXED))).to.equal(RELAXED);
    expect(backendOf(loadSharedKernelModule(RELAXED))).to.equal(RELAXED);
    expect(backendOf(loadKernelModule())).to.equal('wasm-simd128');
    expect(names(loadKernelModule(RELAXED))).to.deep.equal(names(loadKernelModule()));
    expect(names(loadSharedKernelModule(RELAXED))).to.deep.equal(names(loadKernelModule()));
  });

  for (const metric of METRICS) {
    for (const dim of [1, 3, 17, 128, 384, 1024]) {
      it(`${metric}, ${dim} dims: top-K of 1 to 21 queries equals the float64 reference`, () => {
        const rng = seededRng(dim * 104_729 + (metric === 'l2' ? 1 : 0));
        const model = new KernelModel(dim, metric, 100_000, loadKernelModule(RELAXED));
        for (const v of randomVectors(rng, dim >= 1024 ? 120 : 300, dim)) model.add(v);
        for (const nq of sampled([1, 2, 3, 4, 5, 7, 8, 13, 16, 17, 21])) {
          const queries = randomVectors(rng, nq, dim);
          const k = 1 + randomInt(rng, 20);
          model.search(queries, k).forEach((list, j) => {
            expectSameTopK(metric, list, queries[j], model.rows, k, `nq=${nq} q=${j}`);
          });
        }
      });
    }
  }

  it("gives the simd128 build's ids, except between rows whose scores are within the bound, and scores within it", () => {
    for (const metric of METRICS) {
      for (const dim of [3, 17, 100, 384, 1024]) {
        const rng = seededRng(dim + (metric === 'l2' ? 7 : 0));
        const rows = randomVectors(rng, 2000, dim);
        const queries = randomVectors(rng, 20, dim);
        const packed = Float32Array.from(queries.flat());
        const k = 50;
        const [plain, relaxed] = [loadKernelModule(), loadKernelModule(RELAXED)].map((m) =>
          filled(m, dim, metric, rows).search({ queries: packed, queryCount: queries.length, k, count: rows.length }),
        );
        const close = (a: number, b: number) => Math.abs(a - b) <= BUILDS_SCORE_BOUND * Math.max(1, Math.abs(b));
        for (let at = 0; at < plain.rows.length; at++) {
          const [p, r] = [plain.rows[at], relaxed.rows[at]];
          const query = queries[Math.floor(at / plain.perQuery)];
          // Each build's score against the float64 one of the row it returned.
          expect(close(relaxed.scores[at], plain.scores[at]), `${metric} ${dim}: rank ${at} scores ${relaxed.scores[at]} and ${plain.scores[at]}`).to.equal(
            true,
          );
          if (p !== r)
            expect(
              close(referenceScore(metric, query, rows[p]), referenceScore(metric, query, rows[r])),
              `${metric} ${dim}: rank ${at} rows ${p} and ${r}`,
            ).to.equal(true);
        }
      }
    }
  });

  it("int8: the simd128 build's ids after the float32 re-rank, scores within the bound; inline and 2 threads bit for bit", async () => {
    const pool = new KernelPool(2, loadSharedKernelModule(RELAXED));
    try {
      for (const metric of METRICS) {
        const dim = 96;
        const rng = seededRng(metric === 'l2' ? 5 : 6);
        const rows = randomVectors(rng, 4000, dim);
        const queries = Float32Array.from(randomVectors(rng, 6, dim).flat());
        const [plain, relaxed] = [loadKernelModule(), loadKernelModule(RELAXED)].map((m) =>
          filled(m, dim, metric, rows, 'int8').search({ queries, queryCount: 6, k: 10, candidatePool: 100, count: rows.length }),
        );
        expect(Array.from(relaxed.rows), metric).to.deep.equal(Array.from(plain.rows));
        relaxed.scores.forEach((score, i) => {
          expect(Math.abs(score - plain.scores[i])).to.be.at.most(BUILDS_SCORE_BOUND * Math.max(1, Math.abs(plain.scores[i])));
        });
        const shared = filled(loadSharedKernelModule(RELAXED), dim, metric, rows, 'int8');
        const pooled = await shared.search({ queries, queryCount: 6, k: 10, candidatePool: 100, count: rows.length }, onPool(pool, 50_000));
        pool.release(shared.id);
        expect(Array.from(pooled.rows)).to.deep.equal(Array.from(relaxed.rows));
        expect(Array.from(pooled.scores)).to.deep.equal(Array.from(relaxed.scores));
      }
    } finally {
      await pool.close();
    }
  });

  it('search and search-many of the same queries give bit-identical scores, inline and on 2 threads', async () => {
    const pool = new KernelPool(2, loadSharedKernelModule(RELAXED));
    try {
      for (const metric of METRICS) {
        for (const dim of [3, 17, 128, 384]) {
          const rng = seededRng(dim * 31 + (metric === 'l2' ? 1 : 0));
          const rows = randomVectors(rng, 3000, dim);
          const queries = randomVectors(rng, 21, dim);
          const packed = Float32Array.from(queries.flat());
          const inline = filled(loadKernelModule(RELAXED), dim, metric, rows);
          const shared = filled(loadSharedKernelModule(RELAXED), dim, metric, rows);
          // k 100 takes the single query's stored-keys path at 3000 rows; l2 from 16 dims its bounds path.
          for (const k of [10, 100]) {
            const many = inline.search({ queries: packed, queryCount: queries.length, k, count: rows.length });
            const pooled = await shared.search({ queries: packed, queryCount: queries.length, k, count: rows.length }, onPool(pool, 100_000));
            expect(Array.from(pooled.rows)).to.deep.equal(Array.from(many.rows));
            expect(Array.from(pooled.scores)).to.deep.equal(Array.from(many.scores));
            queries.forEach((_, j) => {
              const one = inline.search({ queries: packed.subarray(j * dim, (j + 1) * dim), queryCount: 1, k, count: rows.length });
              const label = `${metric} ${dim} k=${k} query ${j}`;
              expect(Array.from(one.rows), label).to.deep.equal(Array.from(many.rows.subarray(j * many.perQuery, (j + 1) * many.perQuery)));
              expect(Array.from(one.scores), label).to.deep.equal(Array.from(many.scores.subarray(j * many.perQuery, (j + 1) * many.perQuery)));
            });
          }
          pool.release(shared.id);
        }
      }
    } finally {
      await pool.close();
    }
  });
});
