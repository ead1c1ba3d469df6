// In-process HTTP harness: createApp with config overrides and an optional
// injected clock, listening on an ephemeral port, driven with fetch.
//
//   const api = useServer({ maxVectorsPerSession: 5 });   // inside describe()
//   const res = await api.post('/vectors/add', { token, body: {...} });
import { createHttpServer } from '../../src/http/http-server.js';
import type { AddressInfo } from 'node:net';
import type { Server } from 'node:http';
import { loadConfig, type Config } from '../../src/config.js';
import { createApp } from '../../src/http/app.js';
import type { Clock, SessionStore } from '../../src/sessions/session-store.js';

export interface RequestOptions {
  token?: string;
  /** Sent verbatim as the Authorization header (wins over token). */
  authorization?: string;
  /** Serialised as JSON (with content-type: application/json) unless a string or bytes, sent as they are. */
  body?: unknown;
  headers?: Record<string, string>;
  /** Fail instead of waiting longer than this for the answer. */
  timeoutMs?: number;
}

export interface ApiResponse {
  status: number;
  headers: Headers;
  /** Parsed JSON, or undefined when the body is not JSON. */
  body: any;
  text: string;
}

/** One request to the server at `base` (an origin), answered as status, headers, parsed JSON and text. */
export async function requestAt(base: string, method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
  const headers: Record<string, string> = { ...options.headers };
  if (options.authorization !== undefined) headers.authorization = options.authorization;
  else if (options.token !== undefined) headers.authorization = `Bearer ${options.token}`;
  let body: string | Uint8Array | undefined;
  if (options.body !== undefined) {
    body = typeof options.body === 'string' || options.body instanceof Uint8Array ? options.body : JSON.stringify(options.body);
    if (!Object.keys(headers).some((h) => h.toLowerCase() === 'content-type')) headers['content-type'] = 'application/json';
  }
  const signal = options.timeoutMs ? AbortSignal.timeout(options.timeoutMs) : undefined;
  const res = await fetch(base + path, { method, headers, body: body as BodyInit | undefined, signal });
  const text = await res.text();
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    parsed = undefined;
  }
  return { status: res.status, headers: res.headers, body: parsed, text };
}

export class TestServer {
  private server: Server | undefined;
  base = '';
  store!: SessionStore;
  config!: Config;

  /** What GET /readyz reports (tests set shuttingDown as src/server.ts does on SIGTERM). */
  readiness!: ReturnType<typeof createApp>['readiness'];
  /** Lists the sessions on disk (with deferRestore). */
  restore!: () => Promise<void>;
  /** The kernel pool (KERNEL_THREADS > 1). */
  pool!: ReturnType<typeof createApp>['pool'];
  /** The embedding threads (src/embedding/embedding-pool.ts). */
  embedder!: ReturnType<typeof createApp>['embedder'];
  /** Request bodies in flight (src/http/admission.ts). */
  admission!: ReturnType<typeof createApp>['admission'];
  /** Imports in flight (src/http/import-slots.ts). */
  imports!: ReturnType<typeof createApp>['imports'];

  constructor(
    private readonly overrides: Partial<Config> = {},
    private readonly now?: Clock,
    private readonly deferRestore = false,
  ) {}

  async start(): Promise<void> {
    const { app, store, config, restore, readiness, pool, embedder, admission, imports } = createApp({
      config: loadConfig({}, this.overrides),
      now: this.now,
      deferRestore: this.deferRestore,
    });
    this.store = store;
    this.pool = pool;
    this.embedder = embedder;
    this.admission = admission;
    this.imports = imports;
    this.config = config;
    this.restore = restore;
    this.readiness = readiness;
    const server = createHttpServer(app, config).listen(0, '127.0.0.1');
    this.server = server;
    await new Promise<void>((resolve, reject) => server.once('listening', resolve).once('error', reject));
    this.base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  }

  async close(): Promise<void> {
    const server = this.server;
    if (!server) return;
    this.server = undefined;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
    await this.pool?.close();
    await this.embedder.close();
  }

  request(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse> {
    return requestAt(this.base, method, path, options);
  }

  get(path: string, options?: RequestOptions) {
    return this.request('GET', path, options);
  }

  post(path: string, options?: RequestOptions) {
    return this.request('POST', path, options);
  }

  /** A fresh token (asserts POST /token succeeded). */
  async token(): Promise<string> {
    const res = await this.post('/token');
    if (res.status !== 201) throw new Error(`POST /token answered ${res.status}: ${res.text}`);
    return res.body.token as string;
  }
}

/** A TestServer started before the suite's tests and closed after them. */
export function useServer(overrides: Partial<Config> = {}, now?: Clock): TestServer {
  const server = new TestServer(overrides, now);
  before(() => server.start());
  after(() => server.close());
  return server;
}

/** Assert the error envelope; returns the error object. */
export function expectError(res: ApiResponse, status: number, code: string): { code: string; message: string; details?: any } {
  if (res.status !== status || res.body?.error?.code !== code) {
    throw new Error(`expected ${status} ${code}, got ${res.status} ${res.text}`);
  }
  if (res.body.success !== false) throw new Error(`error body without success: false: ${res.text}`);
  if (typeof res.body.error.message !== 'string' || res.body.error.message === '') throw new Error(`error without a message: ${res.text}`);
  if (typeof res.body.metrics?.requestLatencyMs !== 'number') throw new Error(`error without metrics.requestLatencyMs: ${res.text}`);
  return res.body.error;
}

/** Assert a 2xx success envelope; returns the body. */
export function expectOk(res: ApiResponse, status = 200): any {
  if (res.status !== status || res.body?.success !== true) {
    throw new Error(`expected ${status} success, got ${res.status} ${res.text}`);
  }
  return res.body;
}
