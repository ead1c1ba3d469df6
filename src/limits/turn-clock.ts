// Time spent in this turn of the event loop by one kind of work: the clock
// starts at the turn's first reading and is reset once the turn's polling is
// done (an immediate), so work that arrives in a burst (requests beginning,
// answer pieces made) can give the loop back once it has had its share.

export class TurnClock {
  /** When this turn's first reading was taken (-1: none yet). */
  private start = -1;
  private readonly reset = () => {
    this.start = -1;
  };

  constructor(private readonly now: () => number = () => performance.now()) {}

  /** Milliseconds since this turn's first reading (0 for the first). */
  elapsed(): number {
    const now = this.now();
    if (this.start < 0) {
      this.start = now;
      setImmediate(this.reset);
    }
    return now - this.start;
  }
}
