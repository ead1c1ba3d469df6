import { expect } from 'chai';
import { crc32 } from 'node:zlib';
import { EMBEDDING_MODEL_NAMES, EMBEDDING_MODELS, registerEmbeddingModel } from '../../../src/config.js';
import { LogReader, readFromBuffer, readLog } from '../../../src/sessions/persistence/log-reader.js';
import { CorruptLogError, encodeRecordV2, fileHeader, FILE_HEADER_BYTES, FormatError, type RecordV2 } from '../../../src/sessions/persistence/records-v2.js';

const utf8 = (text: string) => new TextEncoder().encode(text);
const log = (...records: RecordV2[]) => Buffer.concat([fileHeader(), ...records.map((r, i) => encodeRecordV2(r, i + 1))]);

/** Every record of a log, read in chunks of 64 bytes (most records span several). */
async function readAll(bytes: Buffer) {
  const records: RecordV2[] = [];
  const sequences: number[] = [];
  const walk = readLog(new LogReader(readFromBuffer(bytes), bytes.length, 64));
  for (let step = await walk.next(); ; step = await walk.next()) {
    if (step.done) return { records, sequences, ...step.value };
    records.push(step.value.record);
    sequences.push(step.value.sequence);
  }
}

async function rejects(promise: Promise<unknown>, type: new (...args: never[]) => Error, pattern?: RegExp): Promise<void> {
  const err = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err, 'rejects').to.be.instanceOf(type);
  if (pattern) expect((err as Error).message).to.match(pattern);
}

const RECORDS: RecordV2[] = [
  { t: 'open', sessionId: '6f1c2d3e-aaaa-4bbb-8ccc-0123456789ab', createdAt: 1_700_000_000_123 },
  {
    t: 'upsert',
    at: 1_700_000_000_200,
    dimensions: 3,
    metric: 'l2',
    vectorType: 'float32',
    ids: ['a', 'é✓', ''],
    rows: Float32Array.from([0.1, -0, 1e-40, 3.4e38, -7.25, Math.PI, 1, 2, 3]),
    metadata: [utf8('{"k":1}'), null, utf8('{"s":"✓"}')],
    text: null,
  },
  {
    t: 'upsert',
    at: 1_700_000_000_300,
    dimensions: 2,
    metric: 'cosine',
    vectorType: 'float32',
    analyzer: 'english',
    embedding: 'use-lite-512',
    ids: ['t1', 't2'],
    rows: Float32Array.from([1, 2, 3, 4]),
    metadata: [null, null],
    text: [utf8('running dogs'), null],
  },
  {
    t: 'import',
    part: 1,
    parts: 3,
    at: 5,
    dimensions: 2,
    metric: 'cosine',
    vectorType: 'int8',
    ids: ['x'],
    rows: Float32Array.from([1, 2]),
    metadata: [null],
    text: null,
  },
  {
    t: 'upsert',
    at: 1_700_000_000_400,
    dimensions: 2,
    metric: 'l2',
    vectorType: 'float32',
    ids: ['ttl', 'none', 'text'],
    rows: Float32Array.from([1, 2, 3, 4, 5, 6]),
    metadata: [null, utf8('{"k":1}'), null],
    text: [null, null, utf8('"brief"')],
    ttls: [{ ttlMs: 1500, expiresAt: 1_700_000_001_900 }, null, { ttlMs: 1, expiresAt: 1_700_000_000_401 }],
  },
  { t: 'metadata', at: 6, id: 'a', metadata: utf8('{"n":2}') },
  { t: 'renew', at: 11, ids: ['ttl', 'é✓'], expiresAt: [1_700_000_009_000, 12.5] },
  { t: 'delete', at: 7, ids: ['a', 'é✓'] },
  { t: 'clear', at: 8 },
  { t: 'reset', at: 9 },
  { t: 'touch', at: 10 },
  { t: 'synced', back: 0 },
];

describe('session log records v2 (binary)', () => {
  it('decodes every record type as it was encoded, with its sequence, rows bit-exact', async () => {
    const { records, sequences, validBytes, tornTail } = await readAll(log(...RECORDS));
    expect(records).to.deep.equal(RECORDS);
    expect(sequences).to.deep.equal(RECORDS.map((_, i) => i + 1));
    expect(validBytes).to.equal(log(...RECORDS).length);
    expect(tornTail).to.equal(null);
    const rows = (records[1] as Extract<RecordV2, { t: 'upsert' }>).rows;
    expect(Object.is(rows[1], -0)).to.equal(true);
  });

  it('reads an upsert naming a model this server does not know (EMBEDDING_URL unset since) as its rows without a model, not as damage', async () => {
    const upsert = RECORDS.find((r) => r.t === 'upsert') as Extract<RecordV2, { t: 'upsert' }>;
    const bytes = encodeRecordV2({ ...upsert, embedding: 'use-lite-512' }, 1);
    const MODEL_BYTE = 24 + 28; // the record header, then the head's embedding model (records-v2.ts)
    expect(bytes[MODEL_BYTE], 'the builtin model is the first in the list').to.equal(1);
    bytes[MODEL_BYTE] = 200; // a model past this server's list (an endpoint's, configured when it was written)
    bytes.writeUInt32LE(crc32(bytes.subarray(4, 24), crc32(bytes.subarray(24))), 0);
    const { records, tornTail } = await readAll(Buffer.concat([fileHeader(), bytes]));
    expect(tornTail).to.equal(null);
    expect(records).to.deep.equal([upsert]);
  });

  it("names an endpoint's model in the record, so a server that knows another model at its place in the list does not relabel the session", async () => {
    const upsert = RECORDS.find((r) => r.t === 'upsert') as Extract<RecordV2, { t: 'upsert' }>;
    const dims = upsert.dimensions;
    const written = 'model-written-then';
    const served = 'model-served-now';
    registerEmbeddingModel({ name: written, dimensions: dims, metric: 'cosine' });
    const bytes = encodeRecordV2({ ...upsert, embedding: written }, 1);
    const file = Buffer.concat([fileHeader(), bytes]);
    expect((await readAll(file)).records).to.deep.equal([{ ...upsert, embedding: written }]);
    // A restart with EMBEDDING_MODEL changed: the written model is no longer known, another takes its place in the list.
    const at = EMBEDDING_MODEL_NAMES.indexOf(written);
    const spec = EMBEDDING_MODELS[written];
    EMBEDDING_MODEL_NAMES[at] = served;
    delete EMBEDDING_MODELS[written];
    EMBEDDING_MODELS[served] = { name: served, dimensions: dims, metric: 'cosine' };
    try {
      expect((await readAll(file)).records, 'rows kept, no model').to.deep.equal([upsert]);
    } finally {
      EMBEDDING_MODEL_NAMES[at] = written;
      delete EMBEDDING_MODELS[served];
      EMBEDDING_MODELS[written] = spec;
    }
  });

  it('stores float32 rows raw: an upsert of 1000 x 128 takes the rows, ids and metadata bytes and a fixed head', () => {
    const ids = Array.from({ length: 1000 }, (_, i) => `id${i}`);
    const record: RecordV2 = {
      t: 'upsert',
      at: 1,
      dimensions: 128,
      metric: 'l2',
      vectorType: 'float32',
      ids,
      rows: new Float32Array(128_000),
      metadata: ids.map(() => null),
      text: null,
    };
    const idBytes = ids.reduce((total, id) => total + id.length, 0);
    expect(encodeRecordV2(record, 1).length).to.equal(24 + 32 + 128_000 * 4 + 8 * 1000 + idBytes);
  });

  it('refuses a file of another format or version (FormatError), never reading it as records', async () => {
    const other = log(...RECORDS);
    other.writeUInt32LE(3, 8);
    other.writeUInt32LE(crc32(other.subarray(0, 12)), 12);
    await rejects(readAll(other), FormatError, /version/);
    await rejects(readAll(Buffer.from('{"t":"open","v":1,"sessionId":"s"}')), FormatError, /header/);
    const flipped = log(...RECORDS);
    flipped[3] ^= 1;
    await rejects(readAll(flipped), FormatError, /header/);
  });

  it('reads a file shorter than its header, or whose header is zeros, as a log with no record (a crash while its session was created)', async () => {
    for (const bytes of [Buffer.alloc(0), fileHeader().subarray(0, 9), Buffer.alloc(4096)]) {
      expect(await readAll(bytes)).to.deep.equal({ records: [], sequences: [], validBytes: 0, tornTail: null, cutRecords: 0 });
    }
  });

  it('cuts a last record torn at any byte and keeps every whole record before it', async () => {
    const whole = log(RECORDS[0], RECORDS[1]);
    const last = encodeRecordV2(RECORDS[4], 3);
    for (let cut = 0; cut < last.length; cut++) {
      for (const tail of [last.subarray(0, cut), Buffer.concat([last.subarray(0, cut), Buffer.alloc(512)])]) {
        const decoded = await readAll(Buffer.concat([whole, tail]));
        expect(decoded.records, `cut at ${cut}`).to.deep.equal([RECORDS[0], RECORDS[1]]);
        expect(decoded.validBytes).to.equal(whole.length);
      }
    }
  });

  it('keeps the longest valid prefix of a log damaged before its last records, unless a later sync record covers the damage', async () => {
    const head = log(RECORDS[0], RECORDS[1]);
    const middle = encodeRecordV2(RECORDS[4], 3);
    const after = [encodeRecordV2(RECORDS[5], 4), encodeRecordV2(RECORDS[8], 5)];
    const damaged = Buffer.concat([head, middle, ...after]);
    damaged[head.length + 30] ^= 0x10;
    const decoded = await readAll(damaged);
    expect(decoded.records).to.deep.equal([RECORDS[0], RECORDS[1]]);
    expect(decoded.cutRecords).to.equal(2);
    for (const [back, refused] of [
      [0, true],
      [after[0].length + after[1].length, true],
      [middle.length + after[0].length + after[1].length, false],
    ] as const) {
      const withSync = Buffer.concat([damaged, encodeRecordV2({ t: 'synced', back }, 6)]);
      if (refused) await rejects(readAll(withSync), CorruptLogError, /stable storage/);
      else expect((await readAll(withSync)).validBytes).to.equal(head.length);
    }
    expect(head.length).to.be.above(FILE_HEADER_BYTES);
  });
});
