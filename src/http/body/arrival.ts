// A body's bytes in the memory budget as they arrive, not its announced
// length up front: a body announcing 32 MiB (an import 512 MiB) that trickles
// holds only what it sent, plus one step ahead. Each step is checked against
// the budget; a body that does not fit is refused mid-way with 503
// SERVER_AT_CAPACITY and its connection closed (nothing of it is stored).
import type { Context } from 'koa';
import { ApiError } from '../../errors.js';
import type { MemoryBudget, Reservation } from '../../limits/memory-budget.js';

/** Bytes a body holds ahead of what arrived: a body up to this size is held whole before it is read. */
export const BODY_RESERVE_STEP = 1024 * 1024;

const FULL = "the server's memory budget is used up by requests in flight; nothing was read or stored, try again shortly";
const FILLED = "the server's memory budget filled up while this body arrived; nothing was stored, try again shortly";

export class BodyArrival {
  private arrived = 0;

  private constructor(
    private readonly budget: MemoryBudget,
    /** The most the body may be (its announced length, else its limit): the reservation never runs ahead past it. */
    private readonly limit: number,
    readonly reservation: Reservation,
  ) {}

  /**
   * Hold a first step of the body (all of an announced length up to
   * BODY_RESERVE_STEP) before reading it: 503 when it does not fit, nothing
   * read. Undefined without a budget or a body.
   */
  static start(ctx: Context, budget: MemoryBudget | undefined, limit: number): BodyArrival | undefined {
    if (!budget) return undefined;
    const announced = ctx.get('content-length');
    if (announced === '' && ctx.get('transfer-encoding') === '') return undefined;
    const length = announced === '' ? limit : Math.min(Number(announced) || 0, limit);
    return new BodyArrival(budget, length, budget.reserve('bodies', Math.min(length, BODY_RESERVE_STEP), FULL));
  }

  /** `bytes` more of the body arrived: hold them and a step ahead, or throw 503 (the caller stops reading). */
  received(bytes: number): void {
    this.arrived += bytes;
    const held = this.reservation.bytes;
    if (this.arrived <= held) return;
    const target = Math.max(this.arrived, Math.min(this.limit, this.arrived + BODY_RESERVE_STEP));
    this.grow(target - held);
  }

  private grow(bytes: number): void {
    try {
      this.budget.assertRoom(bytes, FILLED);
    } catch (err) {
      // The rest of the body is not read: the connection closes after the answer.
      const { status, code, message, details, headers } = err as ApiError;
      throw new ApiError(status, code, message, details, { ...headers, Connection: 'close' });
    }
    this.reservation.grow(bytes);
  }

  /** The body's buffer grows to `bytes`: hold them all, or throw 503 (the caller stops reading). */
  holdAtLeast(bytes: number): void {
    const held = this.reservation.bytes;
    if (bytes > held) this.grow(bytes - held);
  }

  /** What the body holds once read: its bytes (the step ahead goes back). */
  settle(): void {
    if (this.reservation.bytes > this.arrived) this.reservation.grow(this.arrived - this.reservation.bytes);
  }

  release(): void {
    this.reservation.release();
  }
}
