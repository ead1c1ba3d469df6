// Per-request timings. Handlers measure their steps into ctx.state.timings;
// respond.ts adds them, with requestLatencyMs, to the answer's `metrics` and
// to its Server-Timing header.

export class Timings {
  private readonly start = performance.now();
  readonly entries: Record<string, number> = {};

  /** Run `fn` and record its duration as `name` (milliseconds); a promise it returns (a write logged in pieces) counts until it settles. */
  measure<T>(name: string, fn: () => T): T {
    const t0 = performance.now();
    const done = () => {
      this.entries[name] = round(performance.now() - t0);
    };
    let result: T;
    try {
      result = fn();
    } catch (err) {
      done();
      throw err;
    }
    if (result instanceof Promise) return result.finally(done) as T;
    done();
    return result;
  }

  /** measure() for a step that settles later (a search waiting for its turn or for the kernel pool). */
  async measureAsync<T>(name: string, fn: () => Promise<T>): Promise<T> {
    const t0 = performance.now();
    try {
      return await fn();
    } finally {
      this.entries[name] = round(performance.now() - t0);
    }
  }

  set(name: string, value: number): void {
    this.entries[name] = value;
  }

  elapsed(): number {
    return round(performance.now() - this.start);
  }
}

/** Microsecond resolution is all a millisecond figure needs. */
const round = (ms: number) => Math.round(ms * 1000) / 1000;
