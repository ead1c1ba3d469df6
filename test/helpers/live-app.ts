// startApp(): a TestServer (./http.ts) started outside mocha hooks, for suites
// that start several apps or restart one (the reliability tests), with raw
// bodies and verbatim Authorization headers for hostile input.
import type { Config } from '../../src/config.js';
import type { Clock } from '../../src/sessions/session-store.js';
import { TestServer, type ApiResponse } from './http.js';

export type Reply = ApiResponse;

export interface SendOptions {
  token?: string;
  /** Sent as the Authorization header verbatim (overrides token). */
  authorization?: string;
  /** JSON-encoded. */
  body?: unknown;
  /** Text or bytes sent as they are (content-type application/json unless headers say otherwise). */
  raw?: string | Uint8Array;
  headers?: Record<string, string>;
  timeoutMs?: number;
}

export interface LiveApp {
  url: string;
  config: Config;
  store: TestServer['store'];
  /** The embedding threads (tests that fill or kill them). */
  embedder: TestServer['embedder'];
  send(method: string, path: string, options?: SendOptions): Promise<Reply>;
  /** POST /token and return the token. */
  newToken(): Promise<string>;
  /** List the sessions on disk (started with deferRestore). */
  restore(): Promise<void>;
  close(): Promise<void>;
}

export async function startApp(overrides: Partial<Config> = {}, options: { now?: Clock; deferRestore?: boolean } = {}): Promise<LiveApp> {
  const server = new TestServer(overrides, options.now, options.deferRestore);
  await server.start();
  return {
    url: server.base,
    config: server.config,
    store: server.store,
    embedder: server.embedder,
    send: (method, path, { raw, body, ...rest } = {}) =>
      server.request(method, path, { ...rest, body: raw ?? (body === undefined || typeof body !== 'string' ? body : JSON.stringify(body)) }),
    newToken: () => server.token(),
    restore: () => server.restore(),
    async close() {
      server.store.stopSweeper();
      await server.close();
    },
  };
}
