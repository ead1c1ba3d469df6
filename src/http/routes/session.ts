// GET /session and POST /index/reset.
import { publicLimits } from '../../config.js';
import { replyWithSession, stateOf, type RouteDeps } from '../context.js';
import { noBody } from '../body/no-body.js';

export function sessionRoutes({ router, config, store, auth, authWithoutDbOpenMs }: RouteDeps): void {
  router.get('/session', auth, async (ctx) => {
    const { session, timings } = stateOf(ctx);
    await session.settled(); // its counts after an add applied in slices, not halfway
    const { stats, usage } = timings.measure('statsReadMs', () => ({ stats: session.stats(), usage: session.usage() }));
    replyWithSession(ctx, store, { stats, usage, serverMemory: store.reportedUsage(), limits: publicLimits(config) });
  });

  router.post('/index/reset', authWithoutDbOpenMs, noBody, async (ctx) => {
    const { session, timings } = stateOf(ctx);
    const deleted = await store.writes.inLoopTurn(session, () => timings.measure('resetMs', () => store.writes.reset(session)));
    replyWithSession(ctx, store, { mutation: { reset: true, deleted } });
  });
}
