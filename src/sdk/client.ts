// tempvec client: one method per route (named as the OpenAPI operationIds).
// It gets a token on first use and keeps it. When the session has expired it
// says so (SessionExpiredError, and onSessionExpired) and does not quietly
// start a new, empty session: the caller decides, with createToken().
// Works in browsers and in Node 20 (global fetch).
import { encodeFloat32Base64 } from '../schemas/base64-float32.js';
import type * as t from './types.js';

export class TempvecError extends Error {
  constructor(
    readonly status: number,
    /** The server's stable error code (VALIDATION_ERROR, DIMENSION_MISMATCH, ...). */
    readonly code: string,
    message: string,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = 'TempvecError';
  }
}

/** The session and everything in its index are gone; call createToken() to start again. */
export class SessionExpiredError extends TempvecError {
  constructor(message: string, details?: Record<string, unknown>) {
    super(401, 'SESSION_EXPIRED', message, details);
    this.name = 'SessionExpiredError';
  }
}

export interface ClientOptions {
  /** Base URL of the service; defaults to where this module was loaded from (http 127.0.0.1:3000 from a file). */
  baseUrl?: string;
  /** Reuse an existing token. */
  token?: string;
  fetch?: typeof fetch;
  /** Called once when the server reports the session expired (its index is deleted). */
  onSessionExpired?: (error: SessionExpiredError) => void;
}

/**
 * A Float32Array goes as base64 of its bytes (the server takes both forms):
 * its exact values, in about 5.3 characters per component instead of up to
 * 10 or more as decimals. Other array-likes go as JSON numbers.
 */
const toWire = (vector: t.Vector): number[] | string =>
  vector instanceof Float32Array ? encodeFloat32Base64(vector) : Array.from(vector);
const toRecord = (r: t.VectorRecord) => ({ ...r, vector: toWire(r.vector) });

export class TempvecClient {
  readonly baseUrl: string;
  token: string | undefined;
  /** Set when the server said SESSION_EXPIRED; cleared by createToken(). */
  expired: SessionExpiredError | undefined;
  private readonly fetchImpl: typeof fetch;
  private readonly onSessionExpired?: (error: SessionExpiredError) => void;
  private pendingToken: Promise<t.TokenResponse> | undefined;

  constructor(options: ClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? defaultBaseUrl()).replace(/\/$/, '');
    this.token = options.token;
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.onSessionExpired = options.onSessionExpired;
  }

  /** A new anonymous token and an empty session; the client keeps the token. */
  async createToken(): Promise<t.TokenResponse> {
    const body = await this.request<t.TokenResponse>('POST', '/token', undefined, false);
    this.token = body.token;
    this.expired = undefined;
    return body;
  }

  limits() { return this.request<t.LimitsResponse>('GET', '/limits', undefined, false); }
  getSession() { return this.request<t.SessionResponse>('GET', '/session'); }
  resetIndex() { return this.request<t.ResetResponse>('POST', '/index/reset'); }
  has(id: string) { return this.request<t.HasResponse>('POST', '/vectors/has', { id }); }
  get(id: string) { return this.request<t.GetResponse>('POST', '/vectors/get', { id }); }
  getMany(ids: string[]) { return this.request<t.GetManyResponse>('POST', '/vectors/get-many', { ids }); }
  getMetadata(id: string) { return this.request<t.MetadataResponse>('POST', '/vectors/metadata/get', { id }); }
  setMetadata(id: string, metadata: t.Metadata) {
    return this.request<t.SetMetadataResponse>('POST', '/vectors/metadata/set', { id, metadata });
  }
  deleteMetadata(id: string) { return this.request<t.SetMetadataResponse>('POST', '/vectors/metadata/delete', { id }); }
  add(record: t.VectorRecord, options: t.SessionOptions = {}) {
    return this.request<t.AddResponse>('POST', '/vectors/add', { ...options, ...toRecord(record) });
  }
  addMany(records: t.VectorRecord[], options: t.SessionOptions = {}) {
    return this.request<t.AddManyResponse>('POST', '/vectors/add-many', { ...options, vectors: records.map(toRecord) });
  }
  delete(id: string) { return this.request<t.DeleteResponse>('POST', '/vectors/delete', { id }); }
  deleteMany(ids: string[]) { return this.request<t.DeleteManyResponse>('POST', '/vectors/delete-many', { ids }); }
  clear() { return this.request<t.ClearResponse>('POST', '/vectors/clear'); }
  search(queryVector: t.Vector, options: t.SearchOptions = {}) {
    return this.request<t.SearchResponse>('POST', '/search', { ...options, queryVector: toWire(queryVector) });
  }
  searchMany(queryVectors: t.Vector[], options: t.SearchOptions = {}) {
    return this.request<t.SearchManyResponse>('POST', '/search-many', { ...options, queryVectors: queryVectors.map(toWire) });
  }

  /** The token, fetched once even when several calls start together. */
  private async ensureToken(): Promise<string> {
    if (this.expired) throw this.expired;
    if (!this.token) {
      this.pendingToken ??= this.createToken().finally(() => { this.pendingToken = undefined; });
      await this.pendingToken;
    }
    return this.token!;
  }

  private async request<T>(method: string, path: string, body?: unknown, auth = true): Promise<T> {
    const headers: Record<string, string> = {};
    if (auth) headers.authorization = `Bearer ${await this.ensureToken()}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await this.fetchImpl(this.baseUrl + path, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await response.json().catch(() => ({}));
    if (response.ok && json.success) return json as T;
    throw this.failure(response, json.error ?? {});
  }

  private failure(response: Response, error: { code?: string; message?: string; details?: Record<string, unknown> }): TempvecError {
    if (error.code === 'SESSION_EXPIRED') {
      const expired = new SessionExpiredError(error.message ?? 'the session expired', error.details);
      const first = !this.expired;
      this.expired = expired;
      if (first) this.onSessionExpired?.(expired);
      return expired;
    }
    return new TempvecError(response.status, error.code ?? 'HTTP_ERROR', error.message ?? response.statusText, error.details);
  }
}

function defaultBaseUrl(): string {
  try {
    // The directory /sdk.js was served from, so a service mounted under a prefix works too.
    const url = new URL('.', import.meta.url);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.href;
  } catch {
    // not loaded from a URL (bundled elsewhere)
  }
  return 'http://127.0.0.1:3000';
}
