// Request starts paced by turns of the event loop. One poll of the sockets
// can bring hundreds of requests at once (bench:adversary: 256 slow bodies
// connecting together, 192 of them refused past the per-address cap); each
// goes through the parser, Koa and its middleware before the loop polls
// again, so their starts alone held a neighbour 67 ms. Requests that arrive
// within START_BUDGET_MS of the turn's first start begin at once; the rest
// wait and begin START_PER_TURN a turn, taken round-robin by token hash
// (fair-queue.ts), so a neighbour's request waits behind one start of each
// other token, not behind the whole burst. At most one request per connection is waiting (Node
// reads a connection's next request after it answers the last), so the queue
// is bounded by MAX_CONNECTIONS; a waiting body is not read, and Node stops
// reading its socket once its buffer is full.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { FairQueue } from '../limits/fair-queue.js';
import { TurnClock } from '../limits/turn-clock.js';
import { tokenKey } from './auth.js';

/** A turn starts requests for this long before later ones wait for turns of their own. */
export const START_BUDGET_MS = 4;
/** Waiting requests started in one turn: a start (parser to first await) takes a fraction of a ms, a refusal about 0.25 ms. */
export const START_PER_TURN = 4;

type Handler = (req: IncomingMessage, res: ServerResponse) => void;

interface WaitingStart {
  req: IncomingMessage;
  res: ServerResponse;
}

export class RequestStarts {
  private readonly waiting = new FairQueue<WaitingStart>();
  /** Time this turn has spent beginning requests. */
  private readonly turn: TurnClock;
  private draining = false;

  constructor(
    private readonly handle: Handler,
    private readonly budgetMs = START_BUDGET_MS,
    now?: () => number,
  ) {
    this.turn = new TurnClock(now);
  }

  /** Requests waiting for a turn of their own. */
  get waitingCount(): number {
    return this.waiting.length;
  }

  /** The server's 'request' listener. */
  readonly listener: Handler = (req, res) => {
    if (this.waiting.length === 0 && this.turn.elapsed() < this.budgetMs) {
      this.handle(req, res);
      return;
    }
    this.waiting.push(tokenKey(req.headers.authorization), { req, res });
    if (!this.draining) {
      this.draining = true;
      setImmediate(this.startNext);
    }
  };

  /** START_PER_TURN waiting requests a turn (an immediate set from an immediate runs on the next turn, after timers and a poll). */
  private readonly startNext = () => {
    for (let started = 0; started < START_PER_TURN && this.waiting.length > 0; ) {
      const start = this.waiting.next() as WaitingStart;
      // A client that gave up while waiting has nothing left to answer.
      if (start.res.destroyed) continue;
      this.handle(start.req, start.res);
      started++;
    }
    if (this.waiting.length > 0) setImmediate(this.startNext);
    else this.draining = false;
  };
}
