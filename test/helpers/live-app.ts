// A createApp() instance listening on a loopback port, and a small fetch
// client for it. Going through a real socket (not a mock) means body limits,
// headers and malformed bytes are exercised exactly as a caller sends them.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import { createServer, type Server } from 'node:http';
import { loadConfig, type Config } from '../../src/config.js';
import { createApp, type AppOptions } from '../../src/http/app.js';

export interface Reply {
  status: number;
  headers: Headers;
  body: any;
}

export interface SendOptions {
  token?: string;
  /** Sent as the Authorization header verbatim (overrides token). */
  authorization?: string;
  /** JSON-encoded unless raw is given. */
  body?: unknown;
  /** Bytes or text sent as is, with content-type application/json unless headers say otherwise. */
  raw?: string | Uint8Array;
  headers?: Record<string, string>;
  /** Fail instead of waiting longer than this for the answer. */
  timeoutMs?: number;
}

export interface LiveApp {
  url: string;
  config: Config;
  store: ReturnType<typeof createApp>['store'];
  send(method: string, path: string, options?: SendOptions): Promise<Reply>;
  /** POST /token and return the token. */
  newToken(): Promise<string>;
  close(): Promise<void>;
}

export async function startApp(overrides: Partial<Config> = {}, options: AppOptions = {}): Promise<LiveApp> {
  const config = loadConfig({}, overrides);
  const { app, store } = createApp({ ...options, config });
  const server: Server = createServer(app.callback());
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  async function send(method: string, path: string, opts: SendOptions = {}): Promise<Reply> {
    const headers: Record<string, string> = { ...opts.headers };
    if (opts.authorization !== undefined) headers.authorization = opts.authorization;
    else if (opts.token !== undefined) headers.authorization = `Bearer ${opts.token}`;
    let body: string | Uint8Array | undefined;
    if (opts.raw !== undefined) body = opts.raw;
    else if (opts.body !== undefined) body = JSON.stringify(opts.body);
    if (body !== undefined && !Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) {
      headers['content-type'] = 'application/json';
    }
    const signal = opts.timeoutMs ? AbortSignal.timeout(opts.timeoutMs) : undefined;
    const res = await fetch(url + path, { method, headers, body, signal });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = JSON.parse(text);
    } catch {
      // left as text; callers assert on it
    }
    return { status: res.status, headers: res.headers, body: parsed };
  }

  return {
    url,
    config,
    store,
    send,
    async newToken() {
      const res = await send('POST', '/token');
      if (res.status !== 201) throw new Error(`POST /token answered ${res.status}: ${JSON.stringify(res.body)}`);
      return res.body.token as string;
    },
    async close() {
      store.stopSweeper();
      server.closeAllConnections();
      server.close();
      await once(server, 'close');
    },
  };
}
