// Rate limits (429 RATE_LIMITED with Retry-After): POST /token per client
// address, and requests per token. A limit of 0 is off. Every answer under a
// limit carries the IETF RateLimit header fields (draft-ietf-httpapi-ratelimit-headers):
//   RateLimit-Policy: "per-token";q=1000;w=2   the bucket's size, refilled from empty in w seconds
//   RateLimit: "per-token";r=998;t=1           requests left now, seconds until the bucket is full
import type { Context, Middleware } from 'koa';
import type { Config } from '../config.js';
import { apiError } from '../errors.js';
import { KeyedBuckets, TokenBucket } from '../limits/token-bucket.js';
import type { Session } from '../sessions/session.js';
import type { Clock } from '../sessions/session-store.js';

/** A token bucket as a quota policy: `burst` requests per `seconds`, the time it takes to refill from empty. */
export function policyHeader(name: string, burst: number, seconds: number): string {
  return `"${name}";q=${burst};w=${seconds}`;
}

function setRateLimitHeaders(ctx: Context, policy: string, name: string, bucket: TokenBucket): void {
  ctx.set('RateLimit-Policy', policy);
  ctx.set('RateLimit', `"${name}";r=${bucket.remaining};t=${Math.ceil(bucket.msUntilFull / 1000)}`);
}

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
  return (
    groups
      .slice(0, 4)
      .map((g) => g.replace(/^0+(?=.)/, ''))
      .join(':') + '::/64'
  );
}

/** Limits POST /token per client address (the socket's, or X-Forwarded-For's with TRUST_PROXY=1). */
export function tokenRateLimit(config: Config, now: Clock): Middleware {
  if (config.tokenRatePerMin === 0) return (_ctx, next) => next();
  const rate = config.tokenRatePerMin / 60;
  const buckets = new KeyedBuckets<string>(rate, config.tokenRatePerMin);
  const policy = policyHeader('per-address', config.tokenRatePerMin, 60);
  return (ctx, next) => {
    const t = now();
    const bucket = buckets.bucketOf(clientKey(ctx.ip), t);
    const wait = bucket.take(t);
    setRateLimitHeaders(ctx, policy, 'per-address', bucket);
    if (wait > 0) throw rateLimited(wait, 'tokens requested from this address');
    return next();
  };
}

/** Checks one request of a session against its bucket and sets the RateLimit headers; throws RATE_LIMITED. */
export type SessionLimiter = (ctx: Context, session: Session) => void;

/** Requests per token: requestRatePerSec on average, bursts of twice that. */
export function sessionRateLimit(config: Config, now: Clock): SessionLimiter {
  if (config.requestRatePerSec === 0) return () => {};
  // Keyed by the session object, so a bucket goes when its session does.
  const buckets = new WeakMap<Session, TokenBucket>();
  const policy = policyHeader('per-token', config.requestRatePerSec * 2, 2);
  return (ctx, session) => {
    const t = now();
    let bucket = buckets.get(session);
    if (!bucket) {
      bucket = new TokenBucket(config.requestRatePerSec, config.requestRatePerSec * 2, t);
      buckets.set(session, bucket);
    }
    const wait = bucket.take(t);
    setRateLimitHeaders(ctx, policy, 'per-token', bucket);
    if (wait > 0) throw rateLimited(wait, 'requests with this token');
  };
}
