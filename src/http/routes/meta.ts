// Unauthenticated routes: limits and token. (GET / and the SDK live in app.ts.)
import { publicLimits } from '../../config.js';
import { addressHash } from '../../sessions/session-addresses.js';
import { clientKey } from '../rate-limit.js';
import { reply, stateOf, type RouteDeps } from '../context.js';
import { noBody } from '../body/no-body.js';

export function metaRoutes({ router, config, store, tokenRateLimit }: RouteDeps): void {
  router.get('/limits', (ctx) => {
    reply(ctx, {
      limits: publicLimits(config),
      usage: { activeSessions: store.size, maxSessions: config.maxSessions, ...store.reportedUsage() },
    });
  });

  router.post('/token', noBody, tokenRateLimit, (ctx) => {
    // Counted per address (IPv6 by /64; with TRUST_PROXY, X-Forwarded-For's): MAX_SESSIONS_PER_ADDRESS.
    const address = config.maxSessionsPerAddress === 0 ? undefined : addressHash(clientKey(ctx.ip));
    const { token, session } = stateOf(ctx).timings.measure('tokenIssueMs', () => store.create(address));
    ctx.set('Cache-Control', 'no-store');
    // Seen at the instant it was created: a whole TTL remaining, whatever the clock did since.
    reply(ctx, { token, tokenType: 'Bearer', session: session.view(session.createdAt), limits: publicLimits(config) }, 201);
  });
}
