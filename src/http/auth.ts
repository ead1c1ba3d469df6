// Bearer authentication: finds the caller's session (ctx.state.session) and
// records the lookup as dbOpenMs; then the per-token rate limit.
import type { Middleware } from 'koa';
import { apiError } from '../errors.js';
import type { SessionStore } from '../sessions/session-store.js';
import type { Session } from '../sessions/session.js';
import { hashToken } from '../sessions/token.js';
import { stateOf } from './context.js';
import type { SessionLimiter } from './rate-limit.js';

const BEARER = /^Bearer ([^\s]+)$/i;
/** Any spelling of a bearer header: the scheme in any case, any blanks around the token. */
const LOOSE_BEARER = /^\s*Bearer\s+([^\s]+)\s*$/i;

/** The token of an Authorization header auth accepts ("Bearer <token>", any case of Bearer), or undefined. */
export function bearerToken(header: string | undefined): string | undefined {
  return header === undefined ? undefined : BEARER.exec(header)?.[1];
}

/**
 * What per-token caps are keyed on: the token's SHA-256, as the session store
 * looks it up, so every spelling of one token's header (case, blanks) shares
 * one set of slots; '' without a token (auth refuses the request).
 */
export function tokenKey(header: string | undefined): string {
  const token = header === undefined ? undefined : LOOSE_BEARER.exec(header)?.[1];
  return token === undefined ? '' : hashToken(token);
}

/** `lookupTiming`: the metric the session lookup is recorded as (null: not recorded, for routes whose spec metrics omit it). */
export function requireSession(store: SessionStore, limit: SessionLimiter = () => {}, lookupTiming: string | null = 'dbOpenMs'): Middleware {
  return async (ctx, next) => {
    // Straight from Node's headers (ctx.get is the same lookup through two delegating getters).
    const header = ctx.req.headers.authorization ?? '';
    const token = bearerToken(header);
    if (token === undefined) {
      throw apiError(
        'UNAUTHORIZED',
        header ? 'the Authorization header must be "Bearer <token>"' : 'send Authorization: Bearer <token>; get a token with POST /token',
      );
    }
    const state = stateOf(ctx);
    const started = performance.now();
    let session: Session;
    try {
      const found = store.authenticate(token);
      // A session reopened from DATA_DIR after a restart arrives later; the wait is part of the lookup.
      session = found instanceof Promise ? await found : found;
    } finally {
      if (lookupTiming) state.timings.set(lookupTiming, Math.round((performance.now() - started) * 1000) / 1000);
    }
    limit(ctx, session);
    state.session = session;
    try {
      await next();
    } finally {
      // A search may have grown the session's memory for its scratch.
      store.recount(session);
    }
    // FSYNC=always: an answer that reports a change waits until the change is on disk.
    const synced = store.durable(session);
    if (synced) await synced;
  };
}
