// A cap on long jobs that run at once (PERSISTENCE_JOBS: reopening a session
// from its log, compacting or rewriting one): past it a job waits its turn,
// first come first served, so their buffers and disk traffic stay bounded
// however many sessions need one at the same time.

export class JobSlots {
  private running = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly max: number) {}

  /** Jobs running, and waiting for a slot. */
  get counts(): { running: number; waiting: number } {
    return { running: this.running, waiting: this.waiting.length };
  }

  /** Run `job` once a slot is free; the slot is freed when it settles. */
  async run<T>(job: () => Promise<T>): Promise<T> {
    if (this.running >= this.max) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.running++;
    try {
      return await job();
    } finally {
      const next = this.waiting.shift();
      if (next) next();
      else this.running--;
    }
  }
}
