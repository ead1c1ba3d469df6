// Metadata filter semantics.
import { expect } from 'chai';
import { compileFilter } from '../../src/index/filter.js';

const matches = (filter: Record<string, unknown>, metadata: Record<string, unknown>) => compileFilter(filter)(metadata);

describe('metadata filter', () => {
  it('matches a scalar by strict equality', () => {
    expect(matches({ color: 'red' }, { color: 'red' })).to.equal(true);
    expect(matches({ color: 'red' }, { color: 'Red' })).to.equal(false);
    expect(matches({ n: 1 }, { n: '1' })).to.equal(false);
    expect(matches({ n: 1 }, { n: true })).to.equal(false);
    expect(matches({ ok: false }, { ok: 0 })).to.equal(false);
    expect(matches({ v: null }, { v: null })).to.equal(true);
    expect(matches({ v: null }, {})).to.equal(false);
  });

  it('matches an array-valued field that contains the value', () => {
    expect(matches({ tags: 'a' }, { tags: ['b', 'a'] })).to.equal(true);
    expect(matches({ tags: 'c' }, { tags: ['b', 'a'] })).to.equal(false);
    expect(matches({ tags: 1 }, { tags: ['1'] })).to.equal(false);
  });

  it('requires every key to match', () => {
    const filter = { color: 'red', size: 2 };
    expect(matches(filter, { color: 'red', size: 2, extra: 1 })).to.equal(true);
    expect(matches(filter, { color: 'red', size: 3 })).to.equal(false);
    expect(matches(filter, { color: 'red' })).to.equal(false);
  });

  it('an empty filter matches everything', () => {
    expect(matches({}, {})).to.equal(true);
    expect(matches({}, { a: 1 })).to.equal(true);
  });

  it('matches object and array filter values by deep equality', () => {
    expect(matches({ pos: { x: 1, y: 2 } }, { pos: { y: 2, x: 1 } })).to.equal(true);
    expect(matches({ pos: { x: 1 } }, { pos: { x: 1, y: 2 } })).to.equal(false);
    expect(matches({ tags: ['a', 'b'] }, { tags: ['a', 'b'] })).to.equal(true);
    expect(matches({ tags: ['a', 'b'] }, { tags: ['b', 'a'] })).to.equal(false);
  });

  it('treats keys like __proto__ and constructor as plain data', () => {
    const filter = JSON.parse('{"__proto__": {"x": 1}}');
    expect(matches(filter, {})).to.equal(false);
    expect(matches(filter, JSON.parse('{"__proto__": {"x": 1}}'))).to.equal(true);
    expect(matches({ constructor: 'Object' }, {})).to.equal(false);
    expect(matches({ toString: 'x' }, {})).to.equal(false);
  });
});
