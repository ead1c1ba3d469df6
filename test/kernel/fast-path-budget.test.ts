// A single query's faster paths (l2 by bounds; a large top k selected after
// the scan) need scratch of 8 or 4 bytes per scanned row. Where the memory
// guard refuses that room, the query takes the one-pass scan in the room the
// memory already holds: the same hits, no growth, no refusal passed on.
import { expect } from 'chai';
import type { Metric } from '../../src/config.js';
import { KernelInstance } from '../../src/kernel/kernel-instance.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';
import { randomVectors, seededRng } from '../helpers/random.js';

const ROWS = 20_000; // 80 KB of keys (160 KB of l2 bounds and list): more than one page of room
const DIM = 16;

function loaded(metric: Metric): KernelInstance {
  const kernel = new KernelInstance(loadKernelModule(), DIM, metric, ROWS);
  kernel.ensureCapacity(ROWS);
  const rows = randomVectors(seededRng(metric === 'l2' ? 3 : 4), ROWS, DIM).map((v) => Float32Array.from(v));
  kernel.writeRows(
    rows.map((_, r) => r),
    rows,
    0,
  );
  return kernel;
}

describe('kernel: the faster single-query paths under a memory guard', () => {
  for (const [metric, k] of [
    ['l2', 10],
    ['l2', 100],
    ['cosine', 100],
  ] as const) {
    it(`${metric}, top ${k}: without room for keys, scans in one pass, same hits`, () => {
      const query = Float32Array.from(randomVectors(seededRng(9), 1, DIM)[0]);
      const free = loaded(metric);
      const expected = free.search({ queries: query, queryCount: 1, k, count: ROWS });
      const grownByFastPath = free.memoryBytes;

      const guarded = loaded(metric);
      // Two queries take the one-pass scan: after them the memory holds that scan's scratch for one.
      guarded.search({ queries: new Float32Array(2 * DIM).fill(0.5), queryCount: 2, k, count: ROWS });
      const held = guarded.memoryBytes;
      expect(grownByFastPath, 'the faster path needs more room than the one-pass scan').to.be.greaterThan(held);
      const asked: number[] = [];
      const guard = (bytes: number) => {
        asked.push(bytes);
        throw new Error('refused');
      };
      const got = guarded.search({ queries: query, queryCount: 1, k, count: ROWS, guard });
      expect(asked.length, 'the guard was asked for the faster path').to.equal(1);
      expect(guarded.memoryBytes).to.equal(held);
      expect(Array.from(got.rows)).to.deep.equal(Array.from(expected.rows));
      expect(Array.from(got.scores)).to.deep.equal(Array.from(expected.scores));
    });
  }
});
