// tempvec client: one method per route. Gets a token on first use and keeps
// it. Works in browsers and in Node 20 (global fetch).

export class TempvecError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
  ) {
    super(message);
    this.name = 'TempvecError';
  }
}

export type Vector = number[] | Float32Array;
export type Metadata = Record<string, unknown>;

export interface ClientOptions {
  /** Base URL of the service; defaults to the origin this module was loaded from. */
  baseUrl?: string;
  /** Reuse an existing token. */
  token?: string;
  fetch?: typeof fetch;
}

const toArray = (v: Vector) => (v instanceof Float32Array ? Array.from(v) : v);

export class TempvecClient {
  readonly baseUrl: string;
  token: string | undefined;
  private readonly fetchImpl: typeof fetch;

  constructor(options: ClientOptions = {}) {
    this.baseUrl = (options.baseUrl ?? defaultBaseUrl()).replace(/\/$/, '');
    this.token = options.token;
    this.fetchImpl = options.fetch ?? globalThis.fetch.bind(globalThis);
  }

  /** A new anonymous token (and session); the client keeps it. */
  async createToken() {
    const body = await this.request('POST', '/token', undefined, false);
    this.token = body.token;
    return body;
  }

  limits() { return this.request('GET', '/limits', undefined, false); }
  session() { return this.request('GET', '/session'); }
  reset() { return this.request('POST', '/index/reset'); }
  has(id: string) { return this.request('POST', '/vectors/has', { id }); }
  get(id: string) { return this.request('POST', '/vectors/get', { id }); }
  getMany(ids: string[]) { return this.request('POST', '/vectors/get-many', { ids }); }
  getMetadata(id: string) { return this.request('POST', '/vectors/metadata/get', { id }); }
  setMetadata(id: string, metadata: Metadata) { return this.request('POST', '/vectors/metadata/set', { id, metadata }); }
  deleteMetadata(id: string) { return this.request('POST', '/vectors/metadata/delete', { id }); }
  add(record: { id: string; vector: Vector; metadata?: Metadata; dimensions?: number; metric?: 'cosine' | 'l2' }) {
    return this.request('POST', '/vectors/add', { ...record, vector: toArray(record.vector) });
  }
  addMany(vectors: { id: string; vector: Vector; metadata?: Metadata }[], options: { dimensions?: number; metric?: 'cosine' | 'l2' } = {}) {
    return this.request('POST', '/vectors/add-many', { ...options, vectors: vectors.map((v) => ({ ...v, vector: toArray(v.vector) })) });
  }
  delete(id: string) { return this.request('POST', '/vectors/delete', { id }); }
  deleteMany(ids: string[]) { return this.request('POST', '/vectors/delete-many', { ids }); }
  clear() { return this.request('POST', '/vectors/clear'); }
  search(queryVector: Vector, options: SearchOptions = {}) {
    return this.request('POST', '/search', { ...options, queryVector: toArray(queryVector) });
  }
  searchMany(queryVectors: Vector[], options: SearchOptions = {}) {
    return this.request('POST', '/search-many', { ...options, queryVectors: queryVectors.map(toArray) });
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any
  private async request(method: string, path: string, body?: unknown, auth = true): Promise<any> {
    if (auth && !this.token) await this.createToken();
    const headers: Record<string, string> = {};
    if (auth) headers.authorization = `Bearer ${this.token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const response = await this.fetchImpl(this.baseUrl + path, {
      method, headers, body: body === undefined ? undefined : JSON.stringify(body),
    });
    const json = await response.json();
    if (!response.ok || !json.success) {
      const error = json.error ?? {};
      throw new TempvecError(response.status, error.code ?? 'HTTP_ERROR', error.message ?? response.statusText, error.details);
    }
    return json;
  }
}

export interface SearchOptions {
  topK?: number;
  candidatePool?: number;
  includeMetadata?: boolean;
  filter?: Record<string, unknown>;
}

function defaultBaseUrl(): string {
  try {
    return new URL('.', import.meta.url).origin;
  } catch {
    return 'http://127.0.0.1:3000';
  }
}
