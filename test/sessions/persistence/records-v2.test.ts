import { expect } from 'chai';
import { crc32 } from 'node:zlib';
import { CorruptLogError } from '../../../src/sessions/persistence/records.js';
import { encodeRecordV2, fileHeader, FILE_HEADER_BYTES, FormatError, type RecordV2, walkLogV2 } from '../../../src/sessions/persistence/records-v2.js';

const utf8 = (text: string) => new TextEncoder().encode(text);
const log = (...records: RecordV2[]) => Buffer.concat([fileHeader(), ...records.map((r, i) => encodeRecordV2(r, i + 1))]);

function readAll(bytes: Buffer) {
  const records: RecordV2[] = [];
  const sequences: number[] = [];
  const walk = walkLogV2(bytes);
  for (let step = walk.next(); ; step = walk.next()) {
    if (step.done) return { records, sequences, ...step.value };
    records.push(step.value.record);
    sequences.push(step.value.sequence);
  }
}

const RECORDS: RecordV2[] = [
  { t: 'open', sessionId: '6f1c2d3e-aaaa-4bbb-8ccc-0123456789ab', createdAt: 1_700_000_000_123 },
  {
    t: 'upsert', at: 1_700_000_000_200, dimensions: 3, metric: 'l2', vectorType: 'float32', ids: ['a', 'é✓', ''],
    rows: Float32Array.from([0.1, -0, 1e-40, 3.4e38, -7.25, Math.PI, 1, 2, 3]), metadata: [utf8('{"k":1}'), null, utf8('{"s":"✓"}')],
  },
  { t: 'import', part: 1, parts: 3, at: 5, dimensions: 2, metric: 'cosine', vectorType: 'int8', ids: ['x'], rows: Float32Array.from([1, 2]), metadata: [null] },
  { t: 'metadata', at: 6, id: 'a', metadata: utf8('{"n":2}') },
  { t: 'delete', at: 7, ids: ['a', 'é✓'] },
  { t: 'clear', at: 8 },
  { t: 'reset', at: 9 },
  { t: 'touch', at: 10 },
  { t: 'synced', back: 0 },
];

describe('session log records v2 (binary)', () => {
  it('decodes every record type as it was encoded, with its sequence, rows bit-exact', () => {
    const { records, sequences, validBytes, tornTail } = readAll(log(...RECORDS));
    expect(records).to.deep.equal(RECORDS);
    expect(sequences).to.deep.equal(RECORDS.map((_, i) => i + 1));
    expect(validBytes).to.equal(log(...RECORDS).length);
    expect(tornTail).to.equal(null);
    const rows = (records[1] as Extract<RecordV2, { t: 'upsert' }>).rows;
    expect(Object.is(rows[1], -0)).to.equal(true);
  });

  it('stores float32 rows raw: an upsert of 1000 x 128 takes the rows, ids and metadata bytes and a fixed head', () => {
    const ids = Array.from({ length: 1000 }, (_, i) => `id${i}`);
    const record: RecordV2 = { t: 'upsert', at: 1, dimensions: 128, metric: 'l2', vectorType: 'float32', ids, rows: new Float32Array(128_000), metadata: ids.map(() => null) };
    const idBytes = ids.reduce((total, id) => total + id.length, 0);
    expect(encodeRecordV2(record, 1).length).to.equal(24 + 32 + 128_000 * 4 + 8 * 1000 + idBytes);
  });

  it('refuses a file of another format or version (FormatError), never reading it as records', () => {
    const other = log(...RECORDS);
    other.writeUInt32LE(3, 8);
    other.writeUInt32LE(crc32(other.subarray(0, 12)), 12);
    expect(() => readAll(other)).to.throw(FormatError, /version/);
    expect(() => readAll(Buffer.from('{"t":"open"}'))).to.throw(FormatError, /header/);
    expect(() => readAll(Buffer.alloc(0))).to.throw(FormatError);
    const flipped = log(...RECORDS);
    flipped[3] ^= 1;
    expect(() => readAll(flipped), 'a damaged header').to.throw(FormatError, /header/);
  });

  it('cuts a last record torn at any byte and keeps every whole record before it', () => {
    const whole = log(RECORDS[0], RECORDS[1]);
    const last = encodeRecordV2(RECORDS[3], 3);
    for (let cut = 0; cut < last.length; cut++) {
      for (const tail of [last.subarray(0, cut), Buffer.concat([last.subarray(0, cut), Buffer.alloc(512)])]) {
        const decoded = readAll(Buffer.concat([whole, tail]));
        expect(decoded.records, `cut at ${cut}`).to.deep.equal([RECORDS[0], RECORDS[1]]);
        expect(decoded.validBytes).to.equal(whole.length);
      }
    }
  });

  it('keeps the longest valid prefix of a log damaged before its last records, unless a later sync record covers the damage', () => {
    const head = log(RECORDS[0], RECORDS[1]);
    const middle = encodeRecordV2(RECORDS[3], 3);
    const after = [encodeRecordV2(RECORDS[4], 4), encodeRecordV2(RECORDS[7], 5)];
    const damaged = Buffer.concat([head, middle, ...after]);
    damaged[head.length + 30] ^= 0x10;
    const decoded = readAll(damaged);
    expect(decoded.records).to.deep.equal([RECORDS[0], RECORDS[1]]);
    expect(decoded.cutRecords).to.equal(2);
    for (const [back, refused] of [[0, true], [after[0].length + after[1].length, true], [middle.length + after[0].length + after[1].length, false]] as const) {
      const withSync = Buffer.concat([damaged, encodeRecordV2({ t: 'synced', back }, 6)]);
      if (refused) expect(() => readAll(withSync), `back ${back}`).to.throw(CorruptLogError, /stable storage/);
      else expect(readAll(withSync).validBytes).to.equal(head.length);
    }
    expect(head.length).to.be.above(FILE_HEADER_BYTES);
  });
});
