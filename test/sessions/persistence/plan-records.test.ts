import { expect } from 'chai';
import { ScratchBuffer } from '../../../src/sessions/persistence/plan-records.js';
import { decodeRecord } from '../../../src/sessions/persistence/record-decoder.js';
import { encodeRecordV2, encodeRows, type RecordV2 } from '../../../src/sessions/persistence/records-v2.js';

function upsert(count: number, dimensions: number, seed: number): Extract<RecordV2, { t: 'upsert' }> {
  const ids = Array.from({ length: count }, (_, i) => `r${seed}-${i}${i % 3 === 0 ? 'é' : ''}`);
  const rows = Float32Array.from({ length: count * dimensions }, (_, i) => seed + i / 7);
  return { t: 'upsert', at: seed, dimensions, metric: 'l2', vectorType: 'float32', ids, rows, metadata: ids.map(() => null), text: null };
}

describe("ScratchBuffer (an add's record, made in a buffer reused from add to add)", () => {
  it('gives records byte-equal to those in buffers of their own, as it grows and past its cap', () => {
    const scratch = new ScratchBuffer();
    // 4 KB, 40 KB, 4 KB again, then 2 MB (past the 1 MiB cap: a buffer of its own).
    const records = [upsert(8, 128, 1), upsert(80, 128, 2), upsert(8, 128, 3), upsert(4000, 128, 4)];
    for (const record of records) {
      const { dimensions: dim } = record;
      const source = {
        count: record.ids.length,
        id: (i: number) => record.ids[i],
        vector: (i: number) => record.rows.subarray(i * dim, (i + 1) * dim),
        metadata: () => null,
      };
      const made = encodeRows(record, source, 9, scratch.take);
      expect(made.equals(encodeRecordV2(record, 9)), `${record.ids.length} rows`).to.equal(true);
      expect(decodeRecord(made, 0, made.length)).to.deep.equal(record);
    }
  });

  it('reuses its buffer below the cap, and never for a record past it', () => {
    const scratch = new ScratchBuffer();
    const small = scratch.take(1000);
    expect(scratch.take(500).buffer).to.equal(small.buffer);
    const large = scratch.take(2 * 1024 * 1024);
    expect(large.buffer).to.not.equal(small.buffer);
    expect(scratch.take(2 * 1024 * 1024).buffer).to.not.equal(large.buffer);
  });
});
