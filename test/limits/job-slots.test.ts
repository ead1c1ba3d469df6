import { expect } from 'chai';
import { JobSlots } from '../../src/limits/job-slots.js';

describe('JobSlots', () => {
  it('runs at most max jobs at once, the rest in the order they came, and frees a slot when a job fails', async () => {
    const slots = new JobSlots(2);
    let running = 0;
    let most = 0;
    const order: number[] = [];
    const job = (n: number, fail = false) =>
      slots.run(async () => {
        running++;
        most = Math.max(most, running);
        await new Promise((resolve) => setTimeout(resolve, 5));
        order.push(n);
        running--;
        if (fail) throw new Error(`job ${n}`);
        return n;
      });
    const results = await Promise.allSettled([job(1), job(2, true), job(3), job(4), job(5)]);
    expect(most).to.equal(2);
    expect(order).to.deep.equal([1, 2, 3, 4, 5]);
    expect(results.map((r) => r.status)).to.deep.equal(['fulfilled', 'rejected', 'fulfilled', 'fulfilled', 'fulfilled']);
    expect(slots.counts).to.deep.equal({ running: 0, waiting: 0 });
  });
});
