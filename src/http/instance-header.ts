// x-tempvec-instance on every response: which instance answered (INSTANCE_ID).
import type { Middleware } from 'koa';

export const INSTANCE_HEADER = 'x-tempvec-instance';

export function instanceHeader(instanceId: string): Middleware {
  return (ctx, next) => {
    ctx.set(INSTANCE_HEADER, instanceId);
    return next();
  };
}
