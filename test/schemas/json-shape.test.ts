import { expect } from 'chai';
import { firstOverKeyLimit, firstTooDeep } from '../../src/schemas/json-shape.js';
import { CheckedBatch } from '../../src/schemas/checked-batch.js';

function nested(levels: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < levels; i++) value = { k: value };
  return value;
}

describe('firstTooDeep', () => {
  it('counts {} as 1 level and each nested container as one more', () => {
    expect(firstTooDeep({}, 1)).to.equal(null);
    expect(firstTooDeep({ a: {} }, 1)).to.deep.equal(['a']);
    expect(firstTooDeep({ a: [1, [2]] }, 2)).to.deep.equal(['a', 1]);
    expect(firstTooDeep('scalar', 0)).to.equal(null);
  });

  it('returns the path of the first value past the limit', () => {
    expect(firstTooDeep(nested(5), 3)).to.deep.equal(['k', 'k', 'k']);
  });

  it("gives a reader's checked batch the depth a walk over its records would", () => {
    const records = () => [
      { id: 'a', vector: Float32Array.of(1) },
      { id: 'b', vector: Float32Array.of(2) },
    ];
    for (const checked of [false, true]) {
      const batch = checked ? new CheckedBatch(records(), undefined) : records();
      // body 1, batch 2, record 3, vector 4
      expect(firstTooDeep({ vectors: batch }, 4), `checked=${checked}`).to.equal(null);
      expect(firstTooDeep({ vectors: batch }, 3), `checked=${checked}`).to.deep.equal(['vectors', 1, 'vector']);
    }
    // Other fields: walked as the records JSON.parse would make.
    const withMetadata = new CheckedBatch(records(), [undefined, { metadata: { a: { b: 1 } } }]);
    expect(firstTooDeep({ vectors: withMetadata }, 5)).to.equal(null);
    expect(firstTooDeep({ vectors: withMetadata }, 4)).to.deep.equal(['vectors', 1, 'metadata', 'a']);
  });

  it('measures a million levels without recursion', () => {
    expect(firstTooDeep(nested(1_000_000), 8)).to.have.length(8);
  });
});

describe('firstOverKeyLimit', () => {
  it('counts keys of nested objects too, not array indexes', () => {
    expect(firstOverKeyLimit({ a: 1, b: { c: 1 } }, 3)).to.equal(null);
    expect(firstOverKeyLimit({ a: 1, b: { c: 1, d: 2 } }, 3)).to.deep.equal(['b']);
    expect(firstOverKeyLimit({ a: [1, 2, 3, 4, 5] }, 1)).to.equal(null);
  });

  it('counts "__proto__" as a key like any other', () => {
    const value = JSON.parse('{"__proto__":{"x":1},"constructor":2}');
    expect(firstOverKeyLimit(value, 2)).to.deep.equal(['__proto__']);
    expect(firstOverKeyLimit(value, 3)).to.equal(null);
  });
});
