// Long work takes turns with the event loop: at most one step (a write's, or
// a slice of any request's work: Slices) runs per turn of the loop, so the
// requests that arrived meanwhile (another session's search) are answered
// between them instead of waiting behind every step queued (bench:abuse's
// metadata attack: eight sessions adding 5,120 metadata values a request;
// bench:adversary: ten add-many in flight, each a slice a turn, held a
// neighbour ten slices long). The steps wait per owner (a token) and take
// their turns round-robin across owners (fair-queue.ts): a neighbour's step
// waits behind one step of each other owner, not behind every step another
// token has queued (forty search-many of one token arriving at once).
import { FairQueue } from './fair-queue.js';

/** Whose work a step is: a session's token hash, or the service's own (compaction, reopen, a caller with no session). */
export type TurnOwner = string;
export const SERVICE_OWNER: TurnOwner = '';

export class LoopTurns {
  private readonly waiting = new FairQueue<() => void>();
  private scheduled = false;

  /** Whether steps are waiting for their turn: work arriving now should queue behind them. */
  get busy(): boolean {
    return this.waiting.length > 0;
  }

  /** Settles on a later turn of the event loop, one waiter a turn: an owner's in order, owners in turn. */
  next(owner: TurnOwner = SERVICE_OWNER): Promise<void> {
    return new Promise<void>((resolve) => {
      this.waiting.push(owner, resolve);
      this.schedule();
    });
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(() => {
      this.scheduled = false;
      this.waiting.next()?.();
      if (this.waiting.length > 0) this.schedule();
    });
  }
}

/** The process's one queue of turns: writes and every request's slices wait in it, fair among tokens. */
export const LOOP_TURNS = new LoopTurns();
