// TurnClock (src/limits/turn-clock.ts): time since this turn's first reading, reset on the next turn.
import { expect } from 'chai';
import { TurnClock } from '../../src/limits/turn-clock.js';

describe('TurnClock', () => {
  it("counts from the turn's first reading and starts over on the next turn", async () => {
    let now = 100;
    const clock = new TurnClock(() => now);
    expect(clock.elapsed()).to.equal(0);
    now = 103;
    expect(clock.elapsed()).to.equal(3);
    now = 110;
    expect(clock.elapsed()).to.equal(10);
    await new Promise((resolve) => setImmediate(resolve));
    now = 120;
    expect(clock.elapsed()).to.equal(0);
    now = 121;
    expect(clock.elapsed()).to.equal(1);
  });
});
