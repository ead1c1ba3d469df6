// The JS heap estimate of stored vectors (src/index/heap-size.ts) against the
// heap they take, measured in a child process with --expose-gc.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';

/** The estimate may be this much below the measured growth (hash tables between doublings) or above it. */
const LOW = 0.8;
const HIGH = 2.5;

interface Growth { kind: string; count: number; measured: number; estimated: number }

async function measure(): Promise<Growth[]> {
  const script = new URL('../helpers/heap-growth.ts', import.meta.url).pathname;
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--import', 'tsx', script], { maxBuffer: 1 << 20 });
  return stdout.trim().split('\n').map((line) => JSON.parse(line) as Growth);
}

describe('heap size estimate of stored vectors', function () {
  this.timeout(120_000);

  it(`is within ${LOW}x to ${HIGH}x of the measured heap growth for every kind of metadata`, async () => {
    const rows = await measure();
    expect(rows.map((r) => r.kind)).to.include.members(['none', 'unique256', 'emptyObjects', 'twoByteText']);
    for (const { kind, measured, estimated } of rows) {
      const ratio = estimated / measured;
      expect(ratio, `${kind}: estimated ${estimated}, measured ${measured}`).to.be.within(LOW, HIGH);
    }
  });

  it('returns to zero after deletes, clear and reset, and counts replaced metadata once', () => {
    const index = new VectorIndex(loadKernelModule(), 100);
    const records = Array.from({ length: 50 }, (_, i) => ({ id: `v${i}`, vector: [1, 2, i + 1], metadata: { tag: `t${i % 7}`, n: i, list: [i, 'x', { deep: i }] } }));
    index.upsert(records);
    const full = index.heapBytes;
    expect(full).to.be.greaterThan(0);
    index.upsert(records.map((r) => ({ ...r, metadata: { other: r.id } })));
    index.upsert(records);
    expect(index.heapBytes).to.equal(full);
    index.delete(records.slice(0, 25).map((r) => r.id));
    index.setMetadata('v30', {});
    index.delete(records.slice(25).map((r) => r.id));
    expect(index.heapBytes).to.equal(0);
    index.upsert(records);
    expect(index.heapBytes).to.equal(full);
    index.clear();
    expect(index.heapBytes).to.equal(0);
    index.upsert(records);
    index.reset();
    expect(index.heapBytes).to.equal(0);
  });

  it('plans at least the heap an add then takes', () => {
    const index = new VectorIndex(loadKernelModule(), 100);
    const records = Array.from({ length: 40 }, (_, i) => ({ id: `v${i}`, vector: [1, 2, i + 1], metadata: { tag: `t${i % 3}`, a: [{ b: i }, { b: 'x' }] } }));
    const plan = index.prepareUpsert(records);
    index.applyUpsert(plan);
    expect(plan.heapBytesAdded).to.be.at.least(index.heapBytes);
  });
});
