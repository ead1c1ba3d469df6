// mergePatch: RFC 7396, including the examples of its appendix A.
import { expect } from 'chai';
import { mergePatch } from '../../src/index/merge-patch.js';

describe('mergePatch (RFC 7396)', () => {
  it("gives the results of the RFC's appendix A examples", () => {
    const cases: [unknown, unknown, unknown][] = [
      [{ a: 'b' }, { a: 'c' }, { a: 'c' }],
      [{ a: 'b' }, { b: 'c' }, { a: 'b', b: 'c' }],
      [{ a: 'b' }, { a: null }, {}],
      [{ a: 'b', b: 'c' }, { a: null }, { b: 'c' }],
      [{ a: ['b'] }, { a: 'c' }, { a: 'c' }],
      [{ a: 'c' }, { a: ['b'] }, { a: ['b'] }],
      [{ a: { b: 'c' } }, { a: { b: 'd', c: null } }, { a: { b: 'd' } }],
      [{ a: [{ b: 'c' }] }, { a: [1] }, { a: [1] }],
      [
        ['a', 'b'],
        ['c', 'd'],
        ['c', 'd'],
      ],
      [{ a: 'b' }, ['c'], ['c']],
      [{ a: 'foo' }, null, null],
      [{ a: 'foo' }, 'bar', 'bar'],
      [{ e: null }, { a: 1 }, { e: null, a: 1 }],
      [[1, 2], { a: 'b', c: null }, { a: 'b' }],
      [{}, { a: { bb: { ccc: null } } }, { a: { bb: {} } }],
    ];
    for (const [target, patch, result] of cases) expect(mergePatch(target, patch)).to.deep.equal(result);
  });

  it('leaves the target unchanged and keeps "__proto__" a plain key', () => {
    const target = { a: { b: 1 } };
    const out = mergePatch(target, JSON.parse('{"a":{"c":2},"__proto__":{"x":1}}')) as Record<string, unknown>;
    expect(target).to.deep.equal({ a: { b: 1 } });
    expect(Object.keys(out)).to.deep.equal(['a', '__proto__']);
    expect(Object.getPrototypeOf(out)).to.equal(Object.prototype);
    expect((out as { x?: unknown }).x).to.equal(undefined);
  });
});
