// LoopTurns (src/limits/loop-turns.ts): the routes' writes and every request's
// slices, one a turn of the event loop, round-robin across tokens.
import { expect } from 'chai';
import { LoopTurns } from '../../src/limits/loop-turns.js';
import { seededRng } from '../helpers/random.js';

describe('LoopTurns', () => {
  it('lets one waiter go a turn of the event loop, in the order they came', async () => {
    const turns = new LoopTurns();
    let turn = 0;
    let running = true;
    const tick = () => {
      turn++;
      if (running) setImmediate(tick);
    };
    setImmediate(tick);
    const order: number[] = [];
    const seen = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        turns.next().then(() => {
          order.push(i);
          return turn;
        }),
      ),
    );
    running = false;
    expect(order).to.deep.equal([0, 1, 2, 3, 4, 5]);
    // Each on a turn of its own: what arrived meanwhile runs between them.
    expect(new Set(seen).size).to.equal(6);
  });

  it('lets a waiter that comes when none waits go on the next turn', async () => {
    const turns = new LoopTurns();
    let immediate = false;
    setImmediate(() => (immediate = true));
    await turns.next();
    await turns.next();
    expect(immediate).to.equal(true);
  });

  it("takes owners' steps in turn: a step waits behind one step of each other owner, not behind all they queued", async () => {
    const turns = new LoopTurns();
    const order: string[] = [];
    const wait = (owner: string, i: number) => turns.next(owner).then(() => order.push(`${owner}${i}`));
    const waiting = [...Array.from({ length: 40 }, (_, i) => wait('a', i)), wait('b', 0), wait('b', 1), wait('c', 0)];
    await Promise.all(waiting);
    // Each owner's steps keep their order; b's and c's first come within three turns, not after a's forty.
    expect(order.filter((s) => s.startsWith('a'))).to.deep.equal(Array.from({ length: 40 }, (_, i) => `a${i}`));
    expect(order.slice(0, 5)).to.deep.equal(['a0', 'b0', 'c0', 'a1', 'b1']);
    expect(order.length).to.equal(43);
  });

  it('matches a plain round-robin model on random arrivals', async () => {
    const random = seededRng(7);
    for (let round = 0; round < 20; round++) {
      const turns = new LoopTurns();
      const order: string[] = [];
      const owners = ['a', 'b', 'c', 'd'].slice(0, 1 + Math.floor(random() * 4));
      const steps = Array.from({ length: 30 }, (_, i) => ({ owner: owners[Math.floor(random() * owners.length)], i }));
      for (const { owner, i } of steps) turns.next(owner).then(() => order.push(`${owner}${i}`));
      // The model: per owner FIFO, owners served in the order they first waited, each going to the back after a step.
      const queues = new Map<string, string[]>();
      for (const { owner, i } of steps) queues.set(owner, [...(queues.get(owner) ?? []), `${owner}${i}`]);
      const expected: string[] = [];
      while (queues.size > 0) {
        for (const [owner, queue] of [...queues]) {
          queues.delete(owner);
          expected.push(queue.shift()!);
          if (queue.length > 0) queues.set(owner, queue);
          break;
        }
      }
      await turns.next('z');
      while (order.length < steps.length) await new Promise((resolve) => setImmediate(resolve));
      expect(order, `round ${round}`).to.deep.equal(expected);
    }
  });
});
