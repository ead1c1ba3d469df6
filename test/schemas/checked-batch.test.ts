// add-many's two paths (src/schemas/checked-batch.ts): a batch the body reader
// checked (ids, vectors) has the rest validated through the schema; a
// plain JSON body goes through the whole schema. Whatever the body, both give
// the same verdict and the same error.
import { expect } from 'chai';
import * as v from 'valibot';
import { loadConfig } from '../../src/config.js';
import { readVectorBody } from '../../src/http/body/vector-reader.js';
import { encodeFloat32Base64 } from '../../src/schemas/base64-float32.js';
import { type AddManyResult, type AddManySchemas, CheckedBatch, safeParseAddMany, safeParseAddManyInGroups } from '../../src/schemas/checked-batch.js';
import { requestSchemas } from '../../src/schemas/index.js';
import { requestError } from '../../src/schemas/request-error.js';
import { addManySchemas } from '../../src/schemas/vectors.js';

const config = loadConfig({}, { maxIdLength: 8, maxAddManyBatch: 3 });
const schemas = requestSchemas(config);

const b64 = (values: number[]) => encodeFloat32Base64(values);
const read = (body: unknown) => readVectorBody(Buffer.from(JSON.stringify(body)), undefined, undefined, config.maxIdLength);

/** Ids, metadata and options of a success; the error (code, message, details) of a failure. */
function verdict(s: AddManySchemas, body: unknown) {
  return verdictOf(safeParseAddMany(s, body));
}

function verdictOf(result: AddManyResult) {
  if (!result.success) {
    const { code, message, details } = requestError(result.issues);
    return { code, message, details };
  }
  const { vectors, ...options } = result.output;
  return { options, records: vectors.map(({ vector, ...rest }) => ({ ...rest, vector: vector && Array.from(vector) })) };
}

const bodies: [string, unknown][] = [
  [
    'JSON numbers',
    {
      vectors: [
        { id: 'a', vector: [1, 2] },
        { vector: [3, 4], id: 'b' },
      ],
    },
  ],
  [
    'base64',
    {
      vectors: [
        { id: 'a', vector: b64([1, 2]) },
        { id: 'b', vector: b64([3, 4]) },
      ],
    },
  ],
  ['with options', { metric: 'l2', dimensions: 2, vectors: [{ id: 'a', vector: [1, 2] }] }],
  ['bad option', { metric: 'manhattan', vectors: [{ id: 'a', vector: [1, 2] }] }],
  ['unknown top-level key', { vectors: [{ id: 'a', vector: [1, 2] }], extra: 1 }],
  ['id at the length limit', { vectors: [{ id: 'abcdefgh', vector: [1] }] }],
  ['id over the length limit', { vectors: [{ id: 'abcdefghi', vector: [1] }] }],
  [
    'empty id',
    {
      vectors: [
        { id: 'a', vector: [1] },
        { id: '', vector: [1] },
      ],
    },
  ],
  ['batch over the limit', { vectors: ['a', 'b', 'c', 'd'].map((id) => ({ id, vector: [1] })) }],
  [
    'with metadata',
    {
      vectors: [
        { id: 'a', vector: [1] },
        { id: 'b', vector: [1], metadata: { k: 1 } },
      ],
    },
  ],
  [
    'bad metadata',
    {
      vectors: [
        { id: 'a', vector: [1] },
        { id: 'b', vector: [1], metadata: [1] },
      ],
    },
  ],
  ['bad metadata and a bad option', { vectorType: 'int4', vectors: [{ id: 'a', vector: [1], metadata: null }] }],
  ['unknown record key', { vectors: [{ id: 'a', vector: [1], extra: 1 }] }],
  ['missing id', { vectors: [{ vector: [1] }, { id: 'b', vector: [1] }] }],
  ['numeric id', { vectors: [{ id: 7, vector: [1] }] }],
  ['missing vector', { vectors: [{ id: 'a' }] }],
  ['vector not a vector', { vectors: [{ id: 'a', vector: {} }] }],
  ['empty record', { vectors: [{}] }],
];

describe('add-many: a batch the body reader checked', () => {
  for (const [name, body] of bodies) {
    it(`gives the plain JSON path's verdict: ${name}`, () => {
      const fromReader = read(body);
      // A body the reader declines takes the plain JSON path itself.
      if (fromReader !== undefined) expect(fromReader.vectors).to.be.instanceOf(CheckedBatch);
      expect(verdict(schemas, fromReader ?? body)).to.deep.equal(verdict(schemas, JSON.parse(JSON.stringify(body))));
    });
  }

  it('takes every body whose ids and vectors it can check, whatever else is wrong', () => {
    const taken = bodies.filter(([, body]) => read(body) !== undefined).map(([name]) => name);
    expect(taken).to.deep.equal([
      'JSON numbers',
      'base64',
      'with options',
      'bad option',
      'unknown top-level key',
      'id at the length limit',
      'batch over the limit',
      'with metadata',
      'bad metadata',
      'bad metadata and a bad option',
      'unknown record key',
    ]);
  });

  it("passes a batch without other fields through as the reader's own records", () => {
    const body = read(bodies[1][1])!;
    const result = safeParseAddMany(schemas, body);
    expect(result.success && result.output.vectors).to.equal((body.vectors as CheckedBatch).records);
  });

  describe('with a required field added to the record schema', () => {
    const record = v.strictObject({ ...schemas.ImportRecordSchema.entries, source: v.picklist(['web', 'pdf']) });
    const withSource = addManySchemas(record, config.maxAddManyBatch);
    const without = {
      vectors: [
        { id: 'a', vector: [1] },
        { id: 'b', vector: b64([2]) },
      ],
    };
    const plain = JSON.parse(JSON.stringify(without));

    it('refuses records without it on both paths, at each record', () => {
      const fromReader = verdict(withSource, read(without));
      expect(fromReader).to.deep.equal(verdict(withSource, plain));
      expect(fromReader).to.include({ code: 'VALIDATION_ERROR' });
      expect((fromReader as any).details.issues.map((issue: any) => issue.path)).to.deep.equal(['/vectors/0/source', '/vectors/1/source']);
    });

    it('refuses a bad value on both paths, at its pointer', () => {
      const body = {
        vectors: [
          { id: 'a', vector: [1], source: 'web' },
          { id: 'b', vector: [2], source: 'fax' },
        ],
      };
      const fromReader = verdict(withSource, read(body));
      expect(fromReader).to.deep.equal(verdict(withSource, JSON.parse(JSON.stringify(body))));
      expect(fromReader).to.have.nested.property('details.issues[0].path', '/vectors/1/source');
    });

    it('accepts and keeps it on both paths', () => {
      const body = {
        vectors: [
          { id: 'a', vector: [1], source: 'web' },
          { id: 'b', vector: [2], source: 'pdf', metadata: { k: 1 } },
        ],
      };
      const fromReader = verdict(withSource, read(body));
      expect(fromReader).to.deep.equal(verdict(withSource, JSON.parse(JSON.stringify(body))));
      expect(fromReader).to.deep.equal({ options: {}, records: body.vectors });
    });
  });
});

describe('add-many: a checked batch validated a group of records at a time', () => {
  const wide = loadConfig({}, { maxIdLength: 8, maxAddManyBatch: 1000 });
  const wideSchemas = requestSchemas(wide);
  /** A random batch of `n` records, some with metadata or text, one in `badEvery` of them bad; sometimes a bad option. */
  function randomBody(seed: number, n: number, badEvery: number) {
    let x = seed;
    const next = () => {
      x = (x * 1103515245 + 12345) % 2 ** 31;
      return x / 2 ** 31;
    };
    const vectors = Array.from({ length: n }, (_, i) => {
      const record: Record<string, unknown> = { id: `r${i}`, vector: [next()] };
      if (next() < 0.5) record.metadata = { k: i, tag: `t${i % 7}` };
      if (next() < 0.3) record.text = `text ${i}`;
      if (badEvery > 0 && i % badEvery === badEvery - 1) record[['metadata', 'text', 'extra'][i % 3]] = [i];
      return record;
    });
    return next() < 0.3 ? { metric: 'manhattan', vectors } : { vectors };
  }

  for (const [n, badEvery] of [
    [1, 0],
    [64, 0],
    [65, 0],
    [300, 0],
    [300, 97],
    [1000, 0],
    [1000, 13],
  ]) {
    it(`gives the one-step verdict, issues and paths: ${n} records, ${badEvery ? `one bad in ${badEvery}` : 'all good'}`, async () => {
      for (let seed = 1; seed <= 4; seed++) {
        const body = randomBody(seed * 7919 + n, n, badEvery);
        const checked = read(body);
        expect(checked?.vectors).to.be.instanceOf(CheckedBatch);
        let pauses = 0;
        const grouped = await safeParseAddManyInGroups(wideSchemas, checked, async () => {
          pauses++;
        });
        expect(verdictOf(grouped)).to.deep.equal(verdictOf(safeParseAddMany(wideSchemas, read(body))));
        // A pause between groups of 64 records: the loop is given back while a large batch is checked.
        expect(pauses).to.equal(Math.ceil(n / 64) - 1);
      }
    });
  }
});
