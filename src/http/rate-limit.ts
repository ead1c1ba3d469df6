// Rate limits (429 RATE_LIMITED with Retry-After): POST /token per client
// address, and requests per token. A limit of 0 is off.
import type { Middleware } from 'koa';
import type { Config } from '../config.js';
import { apiError } from '../errors.js';
import { KeyedBuckets, TokenBucket } from '../limits/token-bucket.js';
import type { Session } from '../sessions/session.js';
import type { Clock } from '../sessions/session-store.js';

function rateLimited(waitMs: number, what: string) {
  const seconds = Math.max(1, Math.ceil(waitMs / 1000));
  return apiError('RATE_LIMITED', `too many ${what}; retry in ${seconds} s`, { retryAfterMs: waitMs }, { 'Retry-After': String(seconds) });
}

/**
 * The key a client address is limited under: an IPv4 address as is (also
 * when written IPv4-mapped, ::ffff:a.b.c.d), an IPv6 address by its /64, the
 * block one host or customer usually gets, so cycling through its addresses
 * does not buy more tokens.
 */
export function clientKey(ip: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(ip);
  if (mapped) return mapped[1];
  if (!ip.includes(':')) return ip;
  const [head, tail = ''] = ip.toLowerCase().split('::');
  const left = head ? head.split(':') : [];
  const right = tail ? tail.split(':') : [];
  const groups = ip.includes('::') ? [...left, ...Array(8 - left.length - right.length).fill('0'), ...right] : left;
  return groups.slice(0, 4).map((g) => g.replace(/^0+(?=.)/, '')).join(':') + '::/64';
}

/** Limits POST /token per client address (the socket's, or X-Forwarded-For's with TRUST_PROXY=1). */
export function tokenRateLimit(config: Config, now: Clock): Middleware {
  if (config.tokenRatePerMin === 0) return (_ctx, next) => next();
  const buckets = new KeyedBuckets<string>(config.tokenRatePerMin / 60, config.tokenRatePerMin);
  return (ctx, next) => {
    const wait = buckets.take(clientKey(ctx.ip), now());
    if (wait > 0) throw rateLimited(wait, 'tokens requested from this address');
    return next();
  };
}

/** Checks one request of a session against its bucket; throws RATE_LIMITED. */
export type SessionLimiter = (session: Session) => void;

/** Requests per token: requestRatePerSec on average, bursts of twice that. */
export function sessionRateLimit(config: Config, now: Clock): SessionLimiter {
  if (config.requestRatePerSec === 0) return () => {};
  // Keyed by the session object, so a bucket goes when its session does.
  const buckets = new WeakMap<Session, TokenBucket>();
  return (session) => {
    const t = now();
    let bucket = buckets.get(session);
    if (!bucket) {
      bucket = new TokenBucket(config.requestRatePerSec, config.requestRatePerSec * 2, t);
      buckets.set(session, bucket);
    }
    const wait = bucket.take(t);
    if (wait > 0) throw rateLimited(wait, 'requests with this token');
  };
}
