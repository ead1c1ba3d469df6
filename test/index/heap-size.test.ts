// The JS heap estimate of stored vectors (src/index/heap-size.ts) against the
// heap they take, measured in a child process with --expose-gc.
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { expect } from 'chai';
import { LOG_ENTRY_HEAP_BYTES } from '../../src/index/insertion-order.js';
import { VectorIndex } from '../../src/index/vector-index.js';
import { loadKernelModule } from '../../src/kernel/load-node.js';

/** The estimate may be this much below the measured growth (hash tables between doublings) or above it. */
const LOW = 0.8;
const HIGH = 2.5;
/** Whatever a vector's metadata, the JS heap it takes stays near its id's cost: at most this many bytes a vector. */
const HEAP_PER_VECTOR = 400;

interface Growth {
  kind: string;
  count: number;
  measured: number;
  estimated: number;
  arrayBuffersMeasured: number;
  metadataBytes: number;
}

async function measure(): Promise<Growth[]> {
  const script = new URL('../helpers/heap-growth.ts', import.meta.url).pathname;
  const { stdout } = await promisify(execFile)(process.execPath, ['--expose-gc', '--import', 'tsx', script], { maxBuffer: 1 << 20 });
  return stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line) as Growth);
}

describe('heap size estimate of stored vectors', function () {
  this.timeout(120_000);
  let rows: Growth[];
  before(async () => {
    rows = await measure();
  });

  it(`is within ${LOW}x to ${HIGH}x of the measured heap growth without metadata, and never below it with any`, () => {
    expect(rows.map((r) => r.kind)).to.include.members(['none', 'unique256', 'emptyObjects', 'twoByteText', 'uniqueKeys']);
    const none = rows.find((r) => r.kind === 'none')!;
    expect(none.estimated / none.measured, `none: estimated ${none.estimated}, measured ${none.measured}`).to.be.within(LOW, HIGH);
    for (const { kind, measured, estimated } of rows) {
      expect(estimated, `${kind}: estimated ${estimated}, measured ${measured}`).to.be.at.least(LOW * measured);
    }
  });

  it(`keeps metadata out of the JS heap: at most ${HEAP_PER_VECTOR} bytes of heap a vector for every kind of metadata`, () => {
    for (const { kind, count, measured } of rows) expect(measured / count, kind).to.be.at.most(HEAP_PER_VECTOR);
  });

  it('reports as metadataBytes the ArrayBuffers the metadata store allocates', () => {
    for (const { kind, arrayBuffersMeasured, metadataBytes } of rows) {
      expect(Math.abs(arrayBuffersMeasured - metadataBytes), `${kind}: measured ${arrayBuffersMeasured}, reported ${metadataBytes}`).to.be.at.most(
        0.01 * metadataBytes + 64 * 1024,
      );
    }
  });

  it('returns to zero after deletes, clear and reset, and counts replaced metadata once', () => {
    const index = new VectorIndex(loadKernelModule(), 100);
    const records = Array.from({ length: 50 }, (_, i) => ({
      id: `v${i}`,
      vector: [1, 2, i + 1],
      metadata: { tag: `t${i % 7}`, n: i, list: [i, 'x', { deep: i }] },
    }));
    index.upsert(records);
    const full = index.stats().heapBytes;
    expect(full).to.be.greaterThan(0);
    index.upsert(records.map((r) => ({ ...r, metadata: { other: r.id } })));
    index.upsert(records);
    // Each replace leaves a dead entry in the insertion log until it is compacted.
    expect(index.stats().heapBytes).to.equal(full + 2 * records.length * LOG_ENTRY_HEAP_BYTES);
    index.delete(records.slice(0, 25).map((r) => r.id));
    index.setMetadata('v30', {});
    index.delete(records.slice(25).map((r) => r.id));
    expect(index.stats().heapBytes).to.equal(0);
    index.upsert(records);
    expect(index.stats().heapBytes).to.equal(full);
    index.clear();
    expect(index.stats().heapBytes).to.equal(0);
    expect(index.stats().metadataBytes).to.equal(0);
    index.upsert(records);
    expect(index.stats().metadataBytes).to.be.greaterThan(0);
    index.reset();
    expect(index.stats().heapBytes).to.equal(0);
    expect(index.stats().metadataBytes).to.equal(0);
  });

  it('plans at least the heap and the metadata bytes an add then takes', () => {
    const index = new VectorIndex(loadKernelModule(), 100);
    const records = Array.from({ length: 40 }, (_, i) => ({ id: `v${i}`, vector: [1, 2, i + 1], metadata: { tag: `t${i % 3}`, a: [{ b: i }, { b: 'x' }] } }));
    const plan = index.prepareUpsert(records);
    index.applyUpsert(plan);
    // The metadata figure holds the filter index's path cache (JS heap) too.
    expect(plan.heapBytesAdded + plan.metadataBytesAdded).to.be.at.least(index.stats().heapBytes + index.stats().metadataBytes);
    expect(plan.metadataBytesAdded).to.be.at.least(index.stats().metadataBytes);
  });
});
