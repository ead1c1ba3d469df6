// SessionStore: issues tokens, finds a session by its token, expires idle
// sessions and frees their memory.
import type { Config } from '../config.js';
import { apiError } from '../errors.js';
import { Session } from './session.js';
import { hashToken, newToken, TOKEN_PATTERN } from './token.js';

export type Clock = () => number;

const MAX_REMEMBERED_EXPIRED = 100_000;

export class SessionStore {
  private readonly sessions = new Map<string, Session>();
  /** Hashes of recently expired tokens, so their callers hear SESSION_EXPIRED, oldest first. */
  private readonly expired = new Map<string, number>();
  private sweeper: NodeJS.Timeout | undefined;

  constructor(
    private readonly config: Config,
    private readonly kernelModule: WebAssembly.Module,
    readonly now: Clock = Date.now,
  ) {}

  get size(): number {
    return this.sessions.size;
  }

  /** A new session and the only copy of its token. */
  create(): { token: string; session: Session } {
    this.sweep();
    if (this.sessions.size >= this.config.maxSessions) {
      throw apiError('SERVER_AT_CAPACITY', `the server holds its maximum of ${this.config.maxSessions} sessions; try again later`, undefined, {
        'Retry-After': String(Math.ceil(Math.min(this.config.sessionTtlMs, 60_000) / 1000)),
      });
    }
    const token = newToken();
    const session = new Session(hashToken(token), this.kernelModule, this.config.maxVectorsPerSession, this.config.sessionTtlMs, this.now());
    this.sessions.set(session.tokenHash, session);
    return { token, session };
  }

  /** The live session of `token`, its expiry slid forward; throws 401 otherwise. */
  authenticate(token: string): Session {
    if (!TOKEN_PATTERN.test(token)) throw apiError('INVALID_TOKEN', 'the token is not valid; request a new one with POST /token');
    const hash = hashToken(token);
    const now = this.now();
    const session = this.sessions.get(hash);
    if (session && session.isExpired(now)) this.expire(session, now);
    else if (session) {
      session.touch(now);
      return session;
    }
    if (this.expired.has(hash)) {
      throw apiError('SESSION_EXPIRED', 'the session expired and its index was deleted; request a new token with POST /token');
    }
    throw apiError('INVALID_TOKEN', 'the token is not valid; request a new one with POST /token');
  }

  /** Expire every idle session and forget old expired tokens. */
  sweep(): void {
    const now = this.now();
    for (const session of this.sessions.values()) if (session.isExpired(now)) this.expire(session, now);
    for (const [hash, at] of this.expired) {
      if (now - at < this.config.expiredTokenMemoryMs) break;
      this.expired.delete(hash);
    }
  }

  startSweeper(): void {
    this.stopSweeper();
    this.sweeper = setInterval(() => this.sweep(), this.config.sweepIntervalMs);
    this.sweeper.unref();
  }

  stopSweeper(): void {
    if (this.sweeper) clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  /**
   * Refuse (503 SERVER_AT_CAPACITY) a change that would take `session` to
   * `bytesAfter` of linear memory when that passes the budget over all
   * sessions. A change that does not grow the memory always passes.
   */
  assertMemoryBudget(session: Session, bytesAfter: number): void {
    const budget = this.config.memoryBudgetBytes;
    const growth = bytesAfter - session.index.memoryBytes;
    if (budget === 0 || growth <= 0) return;
    const total = this.memoryBytes() + growth;
    if (total > budget) {
      throw apiError('SERVER_AT_CAPACITY', 'the server\'s memory budget is used up; nothing was stored, try again later', {
        memoryBudgetBytes: budget, linearMemoryBytes: total - growth, requestedBytes: growth,
      }, { 'Retry-After': String(Math.ceil(Math.min(this.config.sessionTtlMs, 60_000) / 1000)) });
    }
  }

  /** Total linear memory of all sessions, in bytes. */
  memoryBytes(): number {
    let total = 0;
    for (const session of this.sessions.values()) total += session.index.memoryBytes;
    return total;
  }

  private expire(session: Session, now: number): void {
    this.sessions.delete(session.tokenHash);
    session.index.reset(); // drops the memory now, not when the GC finds the session
    this.expired.set(session.tokenHash, now);
    // Bounded: past this many, the oldest expired tokens answer INVALID_TOKEN instead.
    if (this.expired.size > MAX_REMEMBERED_EXPIRED) this.expired.delete(this.expired.keys().next().value!);
  }
}
