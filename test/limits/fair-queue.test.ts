import { expect } from 'chai';
import { FairQueue } from '../../src/limits/fair-queue.js';

describe('FairQueue', () => {
  it('takes owners in turn, each owner its items in order, whatever order they were pushed in', () => {
    const queue = new FairQueue<string>();
    for (let i = 0; i < 4; i++) queue.push('a', `a${i}`);
    queue.push('b', 'b0');
    queue.push('c', 'c0');
    queue.push('b', 'b1');
    expect(queue.length).to.equal(7);
    const order: string[] = [];
    for (let item = queue.next(); item !== undefined; item = queue.next()) order.push(item);
    expect(order).to.deep.equal(['a0', 'b0', 'c0', 'a1', 'b1', 'a2', 'a3']);
    expect(queue.length).to.equal(0);
  });

  it('puts an owner that comes back after emptying its queue at the back of the line', () => {
    const queue = new FairQueue<string>();
    queue.push('a', 'a0');
    queue.push('b', 'b0');
    expect(queue.next()).to.equal('a0');
    queue.push('a', 'a1');
    expect([queue.next(), queue.next(), queue.next()]).to.deep.equal(['b0', 'a1', undefined]);
  });
});
