// Imports in flight: POST /vectors/import holds its records, their texts and
// their log records from its first line until its write is done, so at most
// MAX_IMPORTS_IN_FLIGHT run at once (503 SERVER_AT_CAPACITY past it), one per
// token (429 RATE_LIMITED for a second: a session's writes take turns anyway).
// Checked after auth and before any of the body is read.
import type { Middleware } from 'koa';
import { type Config, SPEC_LIMITS } from '../config.js';
import { apiError } from '../errors.js';
import { Tally } from '../limits/tally.js';
import type { Session } from '../sessions/session.js';
import { stateOf } from './context.js';

/** The body is not read: the connection closes after the answer. */
const RETRY = { 'Retry-After': '1', Connection: 'close' };

export class ImportSlots {
  private readonly slots = new Tally<Session>();

  constructor(private readonly config: Config) {}

  get inFlight(): number {
    return this.slots.total;
  }

  readonly middleware: Middleware = async (ctx, next) => {
    const { session } = stateOf(ctx);
    const perToken = SPEC_LIMITS.maxImportsInFlightPerToken;
    const ofSession = this.slots.of(session);
    if (ofSession >= perToken) {
      throw apiError(
        'RATE_LIMITED',
        `this token already has ${ofSession} import in flight, the most at once; wait for it to finish`,
        { limit: perToken },
        RETRY,
      );
    }
    const max = this.config.maxImportsInFlight;
    if (this.slots.total >= max) {
      throw apiError('SERVER_AT_CAPACITY', `the server is running its maximum of ${max} imports; try again shortly`, { maxImportsInFlight: max }, RETRY);
    }
    this.slots.add(session);
    try {
      await next();
    } finally {
      this.slots.remove(session);
    }
  };
}
