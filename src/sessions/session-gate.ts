// The order of one session's writes and searches. A search on the kernel
// pool reads the session's memory on other threads until it settles, so a
// write waits for every search in flight, and runs alone; searches run side
// by side (each in scratch of its own, KernelInstance.freeScratch). A write
// waiting goes before searches that arrive after it, so a stream of
// searches cannot hold a write back. When nothing is in the way a turn runs
// at once, in the caller's tick.

type Turn = () => void;

export class SessionGate {
  /** Searches holding the gate (until they settle). */
  private searching = 0;
  /** A write holds the gate. */
  private held = false;
  private readonly writes: Turn[] = [];
  private readonly searches: Turn[] = [];
  /** Inside a write's turn (SessionWrites checks that it is). */
  writing = false;

  /** Run `search` when no write holds the gate or waits for it; a promise it returns holds the gate until it settles. */
  async search<T>(search: () => T | Promise<T>): Promise<T> {
    if (this.held || this.writes.length > 0) await new Promise<void>((resolve) => this.searches.push(resolve));
    else this.searching++;
    try {
      return await search();
    } finally {
      this.searching--;
      this.next();
    }
  }

  /** Run `write` alone, once the searches in flight have settled; a promise it returns (a change logged in pieces) holds the gate until it settles. */
  async write<T>(write: () => T | Promise<T>): Promise<T> {
    if (this.held || this.searching > 0 || this.writes.length > 0) await new Promise<void>((resolve) => this.writes.push(resolve));
    else this.held = true;
    let result: T | Promise<T>;
    this.writing = true;
    try {
      result = write();
    } catch (err) {
      this.release();
      throw err;
    }
    // A synchronous turn lets go in the caller's tick.
    if (!(result instanceof Promise)) {
      this.release();
      return result;
    }
    try {
      return await result;
    } finally {
      this.release();
    }
  }

  private release(): void {
    this.writing = false;
    this.held = false;
    this.next();
  }

  /** Whether something holds the gate or waits for it. */
  get busy(): boolean {
    return this.held || this.searching > 0 || this.writes.length > 0 || this.searches.length > 0;
  }

  /** Once the gate is free: the next write waiting, or else every search waiting. */
  private next(): void {
    if (this.held || this.searching > 0) return;
    const write = this.writes.shift();
    if (write) {
      this.held = true;
      write();
      return;
    }
    const searches = this.searches.splice(0);
    this.searching += searches.length;
    for (const resume of searches) resume();
  }
}
