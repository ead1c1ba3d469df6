// What GET /readyz reports (routes/health.ts); server.ts sets shuttingDown.
import type { SessionStore } from '../sessions/session-store.js';

/**
 * The checks of /readyz: the sessions on disk listed, not shutting down. The
 * kernel is compiled before the server listens (createApp() compiles it, or
 * throws), so `kernelCompiled` is true in every answer a listening server gives.
 */
export class Readiness {
  shuttingDown = false;

  constructor(private readonly store: SessionStore) {}

  checks() {
    return { kernelCompiled: true, sessionsRestored: !this.store.restoring, shuttingDown: this.shuttingDown };
  }

  get ready(): boolean {
    const { sessionsRestored, shuttingDown } = this.checks();
    return sessionsRestored && !shuttingDown;
  }
}
