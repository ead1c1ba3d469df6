// The add-many fast path for batches the body reader found plain
// (src/schemas/checked-vectors.ts): whatever the body, validating what the
// reader made gives the same verdict and the same issues as validating what
// JSON.parse makes, and a plain batch comes out as the reader's own array.
import { expect } from 'chai';
import * as v from 'valibot';
import { loadConfig } from '../../src/config.js';
import { readVectorBody } from '../../src/http/body/vector-reader.js';
import { encodeFloat32Base64 } from '../../src/schemas/base64-float32.js';
import { requestSchemas } from '../../src/schemas/index.js';

const config = loadConfig({}, { maxIdLength: 8, maxAddManyBatch: 3 });
const { AddManyRequestSchema } = requestSchemas(config);

const b64 = (values: number[]) => encodeFloat32Base64(values);

/** Verdict and issues (path and message) of the schema on a value. */
function verdict(value: unknown) {
  const result = v.safeParse(AddManyRequestSchema, value);
  if (result.success) return { success: true as const, count: result.output.vectors.length, ids: result.output.vectors.map((r) => r.id) };
  return { success: false as const, issues: result.issues.map((i) => ({ path: (i.path ?? []).map((p) => p.key), message: i.message })) };
}

const bodies: [string, unknown][] = [
  ['plain, JSON numbers', { vectors: [{ id: 'a', vector: [1, 2] }, { vector: [3, 4], id: 'b' }] }],
  ['plain, base64', { vectors: [{ id: 'a', vector: b64([1, 2]) }, { id: 'b', vector: b64([3, 4]) }] }],
  ['plain, with options', { metric: 'dot', dimensions: 2, vectors: [{ id: 'a', vector: [1, 2] }] }],
  ['id at the length limit', { vectors: [{ id: 'abcdefgh', vector: [1] }] }],
  ['id over the length limit', { vectors: [{ id: 'abcdefghi', vector: [1] }] }],
  ['empty id', { vectors: [{ id: 'a', vector: [1] }, { id: '', vector: [1] }] }],
  ['batch over the limit', { vectors: ['a', 'b', 'c', 'd'].map((id) => ({ id, vector: [1] })) }],
  ['with metadata', { vectors: [{ id: 'a', vector: [1], metadata: { k: 1 } }] }],
  ['bad metadata', { vectors: [{ id: 'a', vector: [1], metadata: [1] }] }],
  ['unknown key', { vectors: [{ id: 'a', vector: [1], extra: 1 }] }],
  ['missing id', { vectors: [{ vector: [1] }, { id: 'b', vector: [1] }] }],
  ['numeric id', { vectors: [{ id: 7, vector: [1] }] }],
  ['missing vector', { vectors: [{ id: 'a' }] }],
  ['vector not a vector', { vectors: [{ id: 'a', vector: {} }] }],
  ['empty record', { vectors: [{}] }],
];

describe('add-many fast path for plain batches', () => {
  for (const [name, body] of bodies) {
    it(`gives the ordinary path's verdict: ${name}`, () => {
      const text = JSON.stringify(body);
      const read = readVectorBody(Buffer.from(text));
      // (Bodies the reader declines, e.g. an empty batch or a record that is not an object, never reach this path.)
      expect(read, 'the reader takes the body').to.not.equal(undefined);
      expect(verdict(read)).to.deep.equal(verdict(JSON.parse(text)));
    });
  }

  it('passes a plain batch through as the reader\'s own array, and only the reader\'s', () => {
    const text = JSON.stringify(bodies[1][1]);
    const read = readVectorBody(Buffer.from(text)) as { vectors: unknown[] };
    expect(v.parse(AddManyRequestSchema, read).vectors).to.equal(read.vectors);
    // The same records in an array the reader did not make go through valibot (new objects).
    const copy = [...read.vectors];
    const output = v.parse(AddManyRequestSchema, { vectors: copy }).vectors;
    expect(output).to.not.equal(copy);
    expect(output).to.deep.equal(copy);
  });
});
