// A clock the test moves by hand (injected as `now` into the store / app).
export class ManualClock {
  constructor(public time = Date.UTC(2026, 0, 1, 12, 0, 0)) {}
  readonly now = () => this.time;
  advance(ms: number): void {
    this.time += ms;
  }
}
