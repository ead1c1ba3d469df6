// LoopTurns (src/limits/loop-turns.ts): the routes' writes, one a turn of the event loop.
import { expect } from 'chai';
import { LoopTurns } from '../../src/limits/loop-turns.js';

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
});
