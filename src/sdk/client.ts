// tempvec client: one method per route (named as the OpenAPI operationIds).
// It gets a token on first use and keeps it. When the session has expired it
// says so (SessionExpiredError, and onSessionExpired) and does not quietly
// start a new, empty session: the caller decides, with createToken().
// Works in browsers and in Node 20 (global fetch).
import { ERROR_CODES } from '../errors.js';
import { decodeFloat32Base64, encodeFloat32Base64 } from '../schemas/base64-float32.js';
import { SessionExpiredError, TempvecError } from './errors.js';
import type { ExportSource } from './export-source.js';
import type { LocalIndex } from './local-index.js';
import { isTextQuery } from './local-embedding.js';
import { searchBody, searchManyBody } from './search-body.js';
import type * as r from './response-types.js';
import type * as t from './types.js';

const isServerCode = (code: unknown): code is t.ServerErrorCode => typeof code === 'string' && Object.hasOwn(ERROR_CODES, code);

export interface ClientOptions {
  /**
   * Base URL of the service. Defaults to where this module was served from
   * (a page importing the server's /sdk.js); required anywhere else (the
   * `tempvec/sdk` package, a bundle, a file), where the constructor throws
   * BASE_URL_REQUIRED without it.
   */
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
const toWire = (vector: t.Vector): number[] | string => (vector instanceof Float32Array ? encodeFloat32Base64(vector) : Array.from(vector));
/** A record without a vector goes as it is: the server stores the embedding of its text. */
const toRecord = (r: t.VectorRecord | t.TextRecord) => (r.vector === undefined ? r : { ...r, vector: toWire(r.vector) });
/** A text query goes as `{ text }`: the server embeds it. */
const toQuery = (q: t.Vector | t.TextQuery) => (isTextQuery(q) ? { text: q.text } : toWire(q));

export class TempvecClient {
  readonly baseUrl: string;
  token: string | undefined;
  /** Set when the server said SESSION_EXPIRED; cleared by createToken(). */
  expired: SessionExpiredError | undefined;
  private readonly fetchImpl: typeof fetch;
  private readonly onSessionExpired?: (error: SessionExpiredError) => void;
  private pendingToken: Promise<r.TokenResponse> | undefined;

  constructor(options: ClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? defaultBaseUrl()).replace(/\/$/, '');
    if (!/^https?:\/\//i.test(this.baseUrl)) {
      throw new TempvecError(0, 'BASE_URL_REQUIRED', `baseUrl must be an http(s) URL, got "${this.baseUrl}"`);
    }
    this.token = options.token;
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
    this.onSessionExpired = options.onSessionExpired;
  }

  /** A new anonymous token and an empty session; the client keeps the token. */
  async createToken(): Promise<r.TokenResponse> {
    const body = await this.request<r.TokenResponse>('POST', '/token', undefined, false);
    this.token = body.token;
    this.expired = undefined;
    return body;
  }

  limits() {
    return this.request<r.LimitsResponse>('GET', '/limits', undefined, false);
  }
  getSession() {
    return this.request<r.SessionResponse>('GET', '/session');
  }
  resetIndex() {
    return this.request<r.ResetResponse>('POST', '/index/reset');
  }
  has(id: string) {
    return this.request<r.HasResponse>('POST', '/vectors/has', { id });
  }
  get(id: string, options: t.ReadOptions = {}) {
    return this.request<r.GetResponse>('POST', '/vectors/get', { ...options, id });
  }
  getMany(ids: string[], options: t.ReadOptions = {}) {
    return this.request<r.GetManyResponse>('POST', '/vectors/get-many', { ...options, ids });
  }
  getMetadata(id: string) {
    return this.request<r.MetadataResponse>('POST', '/vectors/metadata/get', { id });
  }
  setMetadata(id: string, metadata: t.Metadata) {
    return this.request<r.SetMetadataResponse>('POST', '/vectors/metadata/set', { id, metadata });
  }
  deleteMetadata(id: string) {
    return this.request<r.SetMetadataResponse>('POST', '/vectors/metadata/delete', { id });
  }
  add(record: t.VectorRecord | t.TextRecord, options: t.SessionOptions = {}) {
    return this.request<r.AddResponse>('POST', '/vectors/add', { ...options, ...toRecord(record) });
  }
  addMany(records: (t.VectorRecord | t.TextRecord)[], options: t.SessionOptions = {}) {
    return this.request<r.AddManyResponse>('POST', '/vectors/add-many', { ...options, vectors: records.map(toRecord) });
  }
  delete(id: string) {
    return this.request<r.DeleteResponse>('POST', '/vectors/delete', { id });
  }
  deleteMany(ids: string[]) {
    return this.request<r.DeleteManyResponse>('POST', '/vectors/delete-many', { ids });
  }
  /** Renew records (per-record TTL): each live one with a ttl expires ttlMs from now; ids not found are reported. */
  touch(ids: string[]) {
    return this.request<r.TouchResponse>('POST', '/vectors/touch', { ids });
  }
  /** Delete every vector a (non-empty) filter matches, atomically. */
  deleteByFilter(filter: t.Metadata) {
    return this.request<r.DeleteManyResponse>('POST', '/vectors/delete-many', { filter });
  }
  count(filter?: t.Metadata) {
    return this.request<r.CountResponse>('POST', '/vectors/count', filter === undefined ? {} : { filter });
  }
  /** One page in insertion order; pass nextCursor back as cursor for the next. */
  /** Counts of each value at a metadata path among the vectors `filter` matches (POST /vectors/facet). */
  facet(path: string, options: t.FacetOptions = {}) {
    return this.request<r.FacetResponse>('POST', '/vectors/facet', { path, ...options });
  }

  list(options: t.ListOptions = {}) {
    return this.request<r.ListResponse>('POST', '/vectors/list', options);
  }
  /** Apply an RFC 7396 merge patch to a vector's metadata. */
  patchMetadata(id: string, patch: t.Metadata) {
    return this.request<r.SetMetadataResponse>('POST', '/vectors/metadata/patch', { id, patch });
  }
  /** Search with the stored vector `id` as the query (left out of its own results); `text` makes it hybrid. */
  searchById(id: string, options: t.GroupedSearchOptions): Promise<r.GroupedSearchResponse>;
  searchById(id: string, options?: t.SearchOptions): Promise<r.SearchResponse>;
  searchById(id: string, options: t.SearchOptions = {}) {
    return this.request<r.SearchAnswer>('POST', '/search', { ...searchBody(options), queryId: id });
  }
  searchManyByIds(ids: string[], options: t.GroupedSearchManyOptions): Promise<r.GroupedSearchManyResponse>;
  searchManyByIds(ids: string[], options?: t.SearchManyOptions): Promise<r.SearchManyResponse>;
  searchManyByIds(ids: string[], options: t.SearchManyOptions = {}) {
    return this.request<r.SearchManyAnswer>('POST', '/search-many', { ...searchManyBody(options), queryIds: ids });
  }
  /** Keyword search: the vectors whose texts best match `text` by BM25. */
  searchText(text: string, options: t.TextSearchOptions = {}) {
    return this.request<r.SearchResponse>('POST', '/search', { ...options, queryText: text });
  }
  /** One keyword search per text. */
  searchManyTexts(texts: string[], options: t.TextSearchOptions = {}) {
    return this.request<r.SearchManyResponse>('POST', '/search-many', { ...options, queryTexts: texts });
  }

  /** GET /vectors/export: the session as NDJSON, streamed (read response.body, or pass it to LocalIndex.fromExport). */
  async exportVectors(options: { vectorEncoding?: t.VectorEncoding } = {}): Promise<Response> {
    const query = options.vectorEncoding ? `?vectorEncoding=${options.vectorEncoding}` : '';
    const response = await this.send('GET', '/vectors/export' + query, undefined, true);
    if (response.ok) return response;
    throw await this.failureOf(response);
  }

  /** The whole export as text. */
  async exportText(options: { vectorEncoding?: t.VectorEncoding } = {}) {
    return (await this.exportVectors(options)).text();
  }

  /**
   * Copy this session into `target` (e.g. `await LocalIndex.load()`): its
   * export, base64 vectors, streamed in and applied all or nothing. Searches
   * there then give the server's ids and scores, offline.
   */
  async exportTo(target: LocalIndex): Promise<{ added: number; replaced: number }> {
    return target.importFrom(await this.exportVectors({ vectorEncoding: 'base64' }));
  }

  /** POST /vectors/import: an export (text, bytes, a stream, a Response, or a LocalIndex's), applied all or nothing. */
  async importVectors(source: ExportSource | LocalIndex) {
    const body = await importBody(source);
    const response = await this.send('POST', '/vectors/import', body, true, 'application/x-ndjson');
    return this.answer<r.ImportResponse>(response);
  }
  clear() {
    return this.request<r.ClearResponse>('POST', '/vectors/clear');
  }
  /** The nearest vectors to `queryVector` (or to the embedding of `{ text }`); with `text`, a hybrid search fusing them with the BM25 ranking of the text. */
  search(queryVector: t.Vector | t.TextQuery, options: t.GroupedSearchOptions): Promise<r.GroupedSearchResponse>;
  search(queryVector: t.Vector | t.TextQuery, options?: t.SearchOptions): Promise<r.SearchResponse>;
  search(queryVector: t.Vector | t.TextQuery, options: t.SearchOptions = {}) {
    return this.request<r.SearchAnswer>('POST', '/search', { ...searchBody(options), queryVector: toQuery(queryVector) });
  }
  /** One search per query vector (or `{ text }`); with `texts` (one per vector), hybrid searches. */
  searchMany(queryVectors: (t.Vector | t.TextQuery)[], options: t.GroupedSearchManyOptions): Promise<r.GroupedSearchManyResponse>;
  searchMany(queryVectors: (t.Vector | t.TextQuery)[], options?: t.SearchManyOptions): Promise<r.SearchManyResponse>;
  searchMany(queryVectors: (t.Vector | t.TextQuery)[], options: t.SearchManyOptions = {}) {
    return this.request<r.SearchManyAnswer>('POST', '/search-many', { ...searchManyBody(options), queryVectors: queryVectors.map(toQuery) });
  }

  /**
   * POST /embed: the server's vectors of `texts` by its embedding model
   * (use-lite-512 unless the server is configured otherwise), asked as base64
   * so they arrive as their exact float32 values.
   */
  async embed(texts: string[]): Promise<r.EmbedResponse> {
    const answer = await this.request<Omit<r.EmbedResponse, 'vectors'> & { vectors: string[] }>('POST', '/embed', { texts, vectorEncoding: 'base64' });
    return { ...answer, vectors: answer.vectors.map(decodeVector) };
  }

  /** The token, fetched once even when several calls start together. */
  private async ensureToken(): Promise<string> {
    if (this.expired) throw this.expired;
    if (!this.token) {
      this.pendingToken ??= this.createToken().finally(() => {
        this.pendingToken = undefined;
      });
      await this.pendingToken;
    }
    return this.token!;
  }

  private async request<T>(method: string, path: string, body?: unknown, auth = true): Promise<T> {
    const response = await this.send(method, path, body === undefined ? undefined : JSON.stringify(body), auth, 'application/json');
    return this.answer<T>(response);
  }

  private async send(method: string, path: string, body: BodyInit | undefined, auth: boolean, contentType?: string): Promise<Response> {
    const headers: Record<string, string> = {};
    if (auth) headers.authorization = `Bearer ${await this.ensureToken()}`;
    if (body !== undefined && contentType) headers['content-type'] = contentType;
    const init: RequestInit & { duplex?: 'half' } = { method, headers, body };
    // A streamed request body (fetch in Node and Chromium require this).
    if (typeof ReadableStream !== 'undefined' && body instanceof ReadableStream) init.duplex = 'half';
    const url = this.baseUrl + path;
    try {
      return await this.fetchImpl(url, init);
    } catch (err) {
      // No answer at all: refused, unreachable, DNS, TLS, CORS refused in a page, aborted.
      const reason = (err as { cause?: { code?: string; message?: string } })?.cause;
      const why = reason?.code ?? reason?.message ?? (err as Error)?.message ?? String(err);
      throw new TempvecError(0, 'NETWORK_ERROR', `no answer from ${method} ${url}: ${why}`, undefined, { cause: err });
    }
  }

  private async answer<T>(response: Response): Promise<T> {
    const json = await response.json().catch(() => ({}));
    if (response.ok && json.success) return json as T;
    throw this.failure(response, json.error ?? {});
  }

  private async failureOf(response: Response): Promise<TempvecError> {
    const json = await response.json().catch(() => ({}));
    return this.failure(response, json.error ?? {});
  }

  private failure(response: Response, error: { code?: string; message?: string; details?: Record<string, unknown> }): TempvecError {
    if (error.code === 'SESSION_EXPIRED') {
      const expired = new SessionExpiredError(error.message ?? 'the session expired', error.details);
      const first = !this.expired;
      this.expired = expired;
      if (first) this.onSessionExpired?.(expired);
      return expired;
    }
    if (isServerCode(error.code)) return new TempvecError(response.status, error.code, error.message ?? response.statusText, error.details);
    // Not a tempvec error body (a proxy's page, or a code newer than this SDK).
    const said = error.code ? `${error.code}: ${error.message ?? ''}` : `${response.status} ${response.statusText}`;
    return new TempvecError(response.status, 'HTTP_ERROR', `${response.url || this.baseUrl} answered ${said}`.trim(), error.details);
  }
}

function decodeVector(text: string): Float32Array {
  const vector = decodeFloat32Base64(text);
  if (!vector) throw new TempvecError(0, 'HTTP_ERROR', 'POST /embed answered a vector that is not base64 float32');
  return vector;
}

/** The body of an import: a LocalIndex becomes its export text. */
async function importBody(source: ExportSource | { export(): string }): Promise<BodyInit> {
  if (typeof source === 'string' || source instanceof Uint8Array) return source as BodyInit;
  if (typeof Response !== 'undefined' && source instanceof Response) return source.body ?? '';
  if (typeof (source as { export?: unknown }).export === 'function') return (source as { export(): string }).export();
  if (typeof ReadableStream !== 'undefined' && source instanceof ReadableStream) return source;
  // An async iterable of bytes: gathered (fetch takes no async iterables in browsers).
  const parts: Uint8Array[] = [];
  for await (const part of source as AsyncIterable<Uint8Array>) parts.push(part);
  return new Blob(parts as BlobPart[]);
}

function defaultBaseUrl(): string {
  let from = 'a bundle';
  try {
    // The directory /sdk.js was served from, so a service mounted under a prefix works too.
    const url = new URL('.', import.meta.url);
    if (url.protocol === 'http:' || url.protocol === 'https:') return url.href;
    from = url.href;
  } catch {
    // not loaded from a URL (bundled elsewhere)
  }
  throw new TempvecError(
    0,
    'BASE_URL_REQUIRED',
    `this SDK was loaded from ${from}, not from a tempvec server, so it cannot tell which server to call: pass new TempvecClient({ baseUrl: 'http://127.0.0.1:3000' })`,
  );
}
