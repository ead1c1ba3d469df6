// The sessions this instance knows, by token hash: those in memory, those on
// disk not reopened since a restart (DATA_DIR), the tokens of recently
// expired ones (so their callers hear SESSION_EXPIRED), and the addresses
// that created them. Expiry moves a session out: its log deleted, its token
// remembered, its memory freed by the `dropped` hook.
import type { Config } from '../config.js';
import { apiError } from '../errors.js';
import type { SessionJournal } from './persistence/session-journal.js';
import type { Session } from './session.js';
import { SessionAddresses } from './session-addresses.js';

const MAX_REMEMBERED_EXPIRED = 100_000;

export class SessionRegistry {
  /** Sessions in memory. */
  private readonly sessions = new Map<string, Session>();
  /** DATA_DIR only: sessions on disk not reopened since the restart (token hash -> last recorded access). */
  private dormant = new Map<string, number>();
  /** Hashes of recently expired tokens, oldest first. */
  private readonly expired = new Map<string, number>();
  /** Live sessions per client address (MAX_SESSIONS_PER_ADDRESS), those on disk included. */
  readonly addresses: SessionAddresses;

  constructor(
    private readonly config: Config,
    private readonly log: SessionJournal | undefined,
    /** A session left (expired): free its memory. */
    private readonly dropped: (session: Session) => void,
  ) {
    this.addresses = new SessionAddresses(config.dataDir);
  }

  /** The sessions on disk (scan()): dormant until their first request. */
  loadNow(dormant: Map<string, number>): void {
    this.dormant = dormant;
    this.addresses.load(dormant);
  }

  /** loadNow() with the event loop free between sessions. */
  async load(dormant: Map<string, number>): Promise<void> {
    await this.addresses.loadAsync(dormant);
    this.dormant = dormant;
  }

  /** The session in memory of `hash`, if any. */
  live(hash: string): Session | undefined {
    return this.sessions.get(hash);
  }

  isLive(session: Session): boolean {
    return this.sessions.get(session.tokenHash) === session;
  }

  liveSessions(): IterableIterator<Session> {
    return this.sessions.values();
  }

  /** Sessions in memory and on disk. */
  get size(): number {
    return this.sessions.size + this.dormant.size;
  }

  /** Token hashes remembered without a session (expired, on disk). */
  get remembered(): number {
    return this.expired.size + this.dormant.size;
  }

  add(session: Session): void {
    this.sessions.set(session.tokenHash, session);
  }

  /** The last recorded access of a session on disk (undefined: none such). */
  lastAccessOnDisk(hash: string): number | undefined {
    return this.dormant.get(hash);
  }

  /** A session stays on disk (a reopen refused or failed), its last access `at`. */
  keepOnDisk(hash: string, at: number): void {
    this.dormant.set(hash, at);
  }

  /** A session on disk is being reopened: no longer dormant. */
  takeFromDisk(hash: string): void {
    this.dormant.delete(hash);
  }

  /** The error for a token with no live session: SESSION_EXPIRED if it expired lately, else INVALID_TOKEN. */
  unknown(hash: string) {
    if (this.expired.has(hash)) {
      return apiError('SESSION_EXPIRED', 'the session expired and its index was deleted; request a new token with POST /token');
    }
    return apiError('INVALID_TOKEN', 'the token is not valid; request a new one with POST /token');
  }

  /** Expire every idle session and forget old expired tokens. */
  sweep(now: number): void {
    for (const session of this.sessions.values()) if (session.isExpired(now)) this.expire(session, now);
    for (const [hash, lastWrite] of this.dormant) {
      if (now >= lastWrite + this.config.sessionTtlMs) this.forget(hash, now);
    }
    for (const [hash, at] of this.expired) {
      if (now - at < this.config.expiredTokenMemoryMs) break;
      this.expired.delete(hash);
    }
    this.log?.files.sweepSetAside(now, this.config.sessionTtlMs);
  }

  /** Expire the idle sessions created from `address` (room for a new one). */
  sweepAddress(address: string, now: number): void {
    for (const hash of this.addresses.sessionsOf(address)) {
      const session = this.sessions.get(hash);
      const lastWrite = this.dormant.get(hash);
      if (session?.isExpired(now)) this.expire(session, now);
      else if (lastWrite !== undefined && now >= lastWrite + this.config.sessionTtlMs) this.forget(hash, now);
    }
  }

  /** An expired session that is only on disk: delete its file, remember its token as expired. */
  forget(hash: string, now: number): void {
    this.dormant.delete(hash);
    this.addresses.remove(hash);
    this.log?.remove(hash);
    this.rememberExpired(hash, now);
  }

  expire(session: Session, now: number): void {
    this.sessions.delete(session.tokenHash);
    this.addresses.remove(session.tokenHash);
    this.dropped(session);
    this.log?.remove(session.tokenHash, session);
    this.rememberExpired(session.tokenHash, now);
  }

  private rememberExpired(hash: string, now: number): void {
    this.expired.set(hash, now);
    // Bounded: past this many, the oldest expired tokens answer INVALID_TOKEN instead.
    if (this.expired.size > MAX_REMEMBERED_EXPIRED) this.expired.delete(this.expired.keys().next().value!);
  }
}
