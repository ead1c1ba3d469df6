// The sweep of expired records (per-record TTL): reads leave a record out
// from the instant it expires (src/index/live-rows.ts); this frees its memory
// afterwards. Every RECORD_SWEEP_INTERVAL (SPEC_LIMITS.recordSweepIntervalMs)
// each live session holding expired rows has them removed a slice at a time,
// each slice in a write turn of its own taken like any write's (inLoopTurn),
// so neither its own searches nor other sessions' requests wait behind a
// large expiry (bench/ttl.bench.ts). Nothing is logged: a reopen replays each
// record's logged expiry and the next sweep frees it again.
import { REQUEST_SLICE_MS, Slices } from '../limits/slices.js';
import type { Session } from './session.js';
import type { SessionWrites } from './session-writes.js';

export class ExpirySweep {
  private timer: NodeJS.Timeout | undefined;
  /** The sweep under way (one at a time: a slow one is not overlapped by the next tick). */
  private running: Promise<void> | null = null;

  constructor(
    private readonly sessions: () => Iterable<Session>,
    private readonly writes: SessionWrites,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.stop();
    this.timer = setInterval(() => {
      this.running ??= this.sweep().finally(() => {
        this.running = null;
      });
    }, this.intervalMs);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
    this.timer = undefined;
  }

  /** Free every live session's expired rows (tests and benches call it directly); settles when done. */
  async sweep(): Promise<void> {
    for (const session of [...this.sessions()]) {
      if (session.index.expiredWaiting) await this.sweepSession(session);
    }
  }

  /** One session's expired rows, a slice per write turn, until none is left (also before a keyword search: SessionSearches.sweepFirst). */
  async sweepSession(session: Session): Promise<void> {
    for (;;) {
      // A request's slice (2 ms), not a background job's: a neighbour waits behind one at most.
      const removed = await this.writes.inLoopTurn(session, () => this.writes.removeExpired(session, new Slices(REQUEST_SLICE_MS)));
      if (removed === 0 || !session.index.expiredWaiting) return;
    }
  }
}
