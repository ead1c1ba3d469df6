// Long jobs on the event loop (compacting or reopening a large session,
// reading a large body, analysing an add's texts) run in slices: a job
// calls pause() between steps and gives the loop back once its slice is
// used up, so requests of other sessions keep being answered.
import { LOOP_TURNS, SERVICE_OWNER, type TurnOwner } from './loop-turns.js';

/** Work this long at most between two turns of the event loop. */
export const SLICE_MS = 8;

/**
 * The slice of a request's own work that a neighbour's request waits behind
 * (texts, metadata and query texts made ready ahead of a turn, a search's
 * steps after its scan, a get-many's reads): shorter than SLICE_MS.
 */
export const REQUEST_SLICE_MS = 2;

export interface SliceOptions {
  /**
   * The work a request brings (analysing, measuring, checking it ahead of its turn) takes one step, not a whole
   * slice, on arrival when others' steps are waiting, then queues behind them (bench:adversary: 40
   * search-many arriving at once each analysed 2 ms of query texts before the loop polled again).
   */
  waitBehind?: boolean;
  /** Whose work this is: its steps take turns with other owners' (loop-turns.ts); the service's by default. */
  owner?: TurnOwner;
}

export class Slices {
  private start = performance.now();
  /** Whether this job has had a turn yet (see waitBehind). */
  private queued = false;
  private readonly waitBehind: boolean;
  private readonly owner: TurnOwner;

  /** `sliceMs` Infinity runs a job in one piece (bench:persistence compares). */
  constructor(
    private readonly sliceMs = SLICE_MS,
    { waitBehind = false, owner = SERVICE_OWNER }: SliceOptions = {},
  ) {
    this.waitBehind = waitBehind;
    this.owner = owner;
  }

  /** Whether this slice has run for its time: pause() would yield. */
  due(): boolean {
    return performance.now() - this.start >= this.sliceMs;
  }

  /** All of `steps`, with a pause (pause()) after each but the last: its result. */
  async run<T>(steps: Generator<unknown, T, unknown>): Promise<T> {
    for (let step = steps.next(); ; step = steps.next()) {
      if (step.done) return step.value;
      await this.pause();
    }
  }

  /** Yield to the event loop when this slice has run for its time; resumed on a later turn, one job's slice a turn. */
  async pause(): Promise<void> {
    if (!this.due() && (this.queued || !this.waitBehind || !LOOP_TURNS.busy)) return;
    await LOOP_TURNS.next(this.owner);
    this.queued = true;
    this.start = performance.now();
  }
}
