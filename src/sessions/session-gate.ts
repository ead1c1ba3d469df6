// The order of one session's writes and searches. A search on the kernel
// pool reads the session's memory on other threads and writes its scratch,
// so while one runs, nothing else may change that memory: a write, or
// another search, waits its turn. Writes go before waiting searches, so a
// stream of searches cannot hold a write back. A search that runs on the
// request's own thread finishes before anything else can happen, so when
// the gate is free it simply runs.

type Turn = () => void;

export class SessionGate {
  /** A turn is taken: a write, or a search that has not settled. */
  private taken = false;
  private readonly writes: Turn[] = [];
  private readonly searches: Turn[] = [];
  /** Inside a write's turn (SessionWrites checks that it is). */
  writing = false;

  /** Run `search` when no write or other search holds the gate; a promise it returns holds the gate until it settles. */
  search<T>(search: () => T | Promise<T>): Promise<T> {
    return this.inTurn(this.searches, search, false);
  }

  /** Run `write` (synchronous) when no search holds the gate, before the searches waiting. */
  write<T>(write: () => T): Promise<T> {
    return this.inTurn(this.writes, write, true);
  }

  /** Whether something holds the gate or waits for it. */
  get busy(): boolean {
    return this.taken || this.writes.length > 0 || this.searches.length > 0;
  }

  private async inTurn<T>(queue: Turn[], run: () => T | Promise<T>, isWrite: boolean): Promise<T> {
    if (this.busy) await new Promise<void>((resolve) => queue.push(resolve));
    this.taken = true;
    let result: T | Promise<T>;
    try {
      this.writing = isWrite;
      result = run();
    } catch (err) {
      this.handOver();
      throw err;
    } finally {
      this.writing = false;
    }
    if (!(result instanceof Promise)) {
      this.handOver();
      return result;
    }
    try {
      return await result;
    } finally {
      this.handOver();
    }
  }

  /** The next turn: a waiting write first, then the oldest waiting search. */
  private handOver(): void {
    this.taken = false;
    const next = this.writes.shift() ?? this.searches.shift();
    if (next) {
      this.taken = true;
      next();
    }
  }
}
