// Long work takes turns with the event loop: at most one step (a write's, or
// a slice of any request's work: Slices) runs per turn of the loop, so the
// requests that arrived meanwhile (another session's search) are answered
// between them instead of waiting behind every step queued (bench:abuse's
// metadata attack: eight sessions adding 5,120 metadata values a request;
// bench:adversary: ten add-many in flight, each a slice a turn, held a
// neighbour ten slices long).
export class LoopTurns {
  private readonly waiting: Array<() => void> = [];
  private scheduled = false;

  /** Whether steps are waiting for their turn: work arriving now should queue behind them. */
  get busy(): boolean {
    return this.waiting.length > 0;
  }

  /** Settles on a later turn of the event loop, one waiter a turn, in order. */
  next(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.waiting.push(resolve);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.waiting.shift()?.();
      if (this.waiting.length > 0) this.schedule();
    });
  }
}

/** The process's one queue of turns: writes and every request's slices wait in it, in order. */
export const LOOP_TURNS = new LoopTurns();
