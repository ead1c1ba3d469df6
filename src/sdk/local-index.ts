// LocalIndex: the server's index, in the page. It is the same VectorIndex
// (src/index/) over the same kernel (.wasm served at /kernel.wasm), with the
// same request schemas checking its input, batch caps included, so ids,
// scores, ties and error codes are the server's, with no round trip. The
// limits are the server defaults bundled with the SDK (src/config.ts), or a
// server's own when its GET /limits is passed in.
import * as v from 'valibot';
import { loadConfig, requestLimitsOf, type Config } from '../config.js';
import { MODEL_NAME } from '../embedding/model-files.js';
import { ApiError } from '../errors.js';
import { exportText } from '../export/format.js';
import { ImportReader, prepareImport } from '../export/import-reader.js';
import { applyToIndex, deleteMatchingChange, patchChange, touchChange } from '../index/changes.js';
import { ttlFields } from '../index/row-expiry.js';
import type { ListedVector, SearchGroup, SearchHit, UpsertOptions, VectorInput } from '../index/types.js';
import { VectorIndex } from '../index/vector-index.js';
import { runSteps } from '../limits/steps.js';
import { backendOf } from '../kernel/kernel-module.js';
import { encodeFloat32Base64 } from '../schemas/base64-float32.js';
import { requestSchemas, type RequestSchemas } from '../schemas/index.js';
import { patchedMetadata } from '../schemas/patched-metadata.js';
import { requestError } from '../schemas/request-error.js';
import { searchCall, searchManyCall, type SearchCall } from '../schemas/search-call.js';
import { loadEmbedder } from './embedder.js';
import { isTextQuery, modelOptions, needsModel, noModelError, sessionOptions, textsOf, withVectors } from './local-embedding.js';
import { searchBody, searchManyBody } from './search-body.js';
import { TempvecError } from './errors.js';
import { chunksOf, type ExportSource } from './export-source.js';
import { loadKernel, type KernelOptions, type KernelSource } from './local-kernel.js';
import type * as r from './response-types.js';
import type * as t from './types.js';

export interface LocalIndexOptions extends KernelOptions {
  /**
   * The embedding model's manifest (GET /models/use-lite-512/manifest.json of
   * a tempvec server), fetched with its files on the first embed; defaults to
   * the one beside this module, or in Node (loaded from a file) the files on disk.
   */
  modelUrl?: string | URL;
  /** Capacity; defaults to `limits.maxVectorsPerSession`, else the server's default maxVectors. */
  maxVectors?: number;
  /**
   * A server's limits (`(await client.limits()).limits`), to refuse what
   * that server refuses (batch caps, id and metadata sizes); defaults to the
   * server defaults this SDK was built with.
   */
  limits?: t.Limits;
  /** The time per-record TTLs run by (ms since the epoch); Date.now by default (a test's clock, say). */
  clock?: () => number;
}

export interface LocalSearchResult {
  results: t.SearchHit[];
  stats: t.SearchStats;
}
export interface LocalSearchManyResult {
  results: t.SearchHit[][];
  stats: t.SearchStats;
}
/** A search with groupBy: `groups` instead of `results`. */
export interface LocalGroupedSearchResult {
  groups: t.SearchGroup[];
  stats: t.SearchStats;
}
export interface LocalGroupedSearchManyResult {
  groups: t.SearchGroup[][];
  stats: t.SearchStats;
}
type LocalAnswer = { results?: t.SearchHit[]; groups?: t.SearchGroup[]; stats: t.SearchStats };
type LocalManyAnswer = { results?: t.SearchHit[][]; groups?: t.SearchGroup[][]; stats: t.SearchStats };

type AddResult = { added: number; replaced: number };

/** The server defaults bundled with the SDK and their schemas: made by the first load, so importing this module runs nothing. */
let bundled: { config: Config; schemas: RequestSchemas } | undefined;

function bundledDefaults(): { config: Config; schemas: RequestSchemas } {
  if (!bundled) {
    const config = loadConfig({});
    bundled = { config, schemas: requestSchemas(config) };
  }
  return bundled;
}

export class LocalIndex {
  private constructor(
    private readonly index: VectorIndex,
    readonly kernelSource: KernelSource,
    private readonly schemas: RequestSchemas,
    /** The kernel build it runs: the server's, or wasm-simd128 where this engine cannot run the relaxed one (docs/api.md). */
    readonly backend: t.Backend,
    private readonly modelUrl: string | URL | undefined,
  ) {}

  /** Load the kernel and make an empty index. */
  static async load(options: LocalIndexOptions = {}): Promise<LocalIndex> {
    const { module, source } = await loadKernel(options);
    const defaults = bundledDefaults();
    const config = options.limits ? { ...defaults.config, ...requestLimitsOf(options.limits) } : defaults.config;
    const schemas = options.limits ? requestSchemas(config) : defaults.schemas;
    const index = new VectorIndex(module, options.maxVectors ?? config.maxVectorsPerSession);
    index.maxTextBytes = config.maxTextBytes;
    if (options.clock) index.clock = options.clock;
    return new LocalIndex(index, source, schemas, backendOf(module), options.modelUrl);
  }

  /**
   * The vectors of `texts` by the server's embedding model (use-lite-512),
   * computed here on the calling thread: equal to the server's. The model's
   * files (28 MB) are fetched and compiled on the first call only, once per
   * page. A text past 128 tokens is truncated; an empty one is VALIDATION_ERROR.
   */
  async embed(texts: readonly string[]): Promise<t.EmbedResult> {
    if (!Array.isArray(texts)) throw new TempvecError(400, 'VALIDATION_ERROR', 'texts must be an array of strings');
    return (await loadEmbedder(this.modelUrl)).embed(texts);
  }

  /** How the embedding model was loaded (loading it if no embed has yet). */
  async embedderLoad(): Promise<t.EmbedderLoad> {
    return (await loadEmbedder(this.modelUrl)).loaded;
  }

  /** Vectors stored and live (an expired record is gone at once). */
  get size(): number {
    return this.index.liveSize;
  }
  get maxVectors(): number {
    return this.index.maxVectors;
  }
  get config(): t.SessionConfig & { initialized: boolean; embedding: t.EmbeddingModel | null } {
    return { ...this.index.getConfig(), backend: this.backend, initialized: this.index.initialized };
  }

  has(id: string): boolean {
    return this.index.has(id);
  }
  /** A stored vector; with includeText its text too (null for none), as POST /vectors/get. */
  get(id: string, options: t.ReadOptions = {}): t.StoredVector | undefined {
    const stored = this.index.get(id);
    if (!stored) return undefined;
    const { text, ttlMs, expiresAt, ...rest } = stored;
    const out: t.StoredVector = { ...rest, metadata: stored.metadata.value() };
    if (options.includeText) out.text = text?.value() ?? null;
    return Object.assign(out, ttlFields({ ttlMs, expiresAt }));
  }

  /**
   * Add or replace vectors, all or nothing; the first add fixes dimensions and metric, as on the server.
   * Records with a text and no vector are stored with its embedding (a Promise then: the model may load first).
   */
  addMany(records: t.VectorRecord[], options?: t.SessionOptions): AddResult;
  addMany(records: (t.VectorRecord | t.TextRecord)[], options?: t.SessionOptions): Promise<AddResult>;
  addMany(records: (t.VectorRecord | t.TextRecord)[], options: t.SessionOptions = {}): AddResult | Promise<AddResult> {
    if (Array.isArray(records) && needsModel(records, options))
      return this.withModel(
        records,
        options,
        (i) => `/vectors/${i}`,
        (filled, rest, model) => this.addVectors(filled, rest, model),
      );
    return this.addVectors(records as t.VectorRecord[], sessionOptions(options));
  }

  private addVectors(records: t.VectorRecord[], options: t.SessionOptions, model: ModelOptions = {}): AddResult {
    const body = parse(this.schemas.AddManyRequestSchema, { ...options, vectors: records.map((r) => ({ ...r, vector: Array.from(r.vector) })) });
    return this.upsert(body.vectors, { dimensions: body.dimensions, metric: body.metric, vectorType: body.vectorType, analyzer: body.analyzer, ...model });
  }

  /** One vector; errors point at /vector as the server's POST /vectors/add does. A text and no vector: its embedding (a Promise). */
  add(record: t.VectorRecord, options?: t.SessionOptions): AddResult;
  add(record: t.TextRecord, options?: t.SessionOptions): Promise<AddResult>;
  add(record: t.VectorRecord | t.TextRecord, options: t.SessionOptions = {}): AddResult | Promise<AddResult> {
    if (needsModel([record], options))
      return this.withModel(
        [record],
        options,
        () => '',
        ([filled], rest, model) => this.addVector(filled, rest, model),
      );
    return this.addVector(record as t.VectorRecord, sessionOptions(options));
  }

  private addVector(record: t.VectorRecord, options: t.SessionOptions, model: ModelOptions = {}): AddResult {
    const { id, vector, metadata, text, ttlMs, dimensions, metric, vectorType, analyzer } = parse(this.schemas.AddRequestSchema, {
      ...options,
      ...record,
      vector: Array.from(record.vector),
    });
    return this.upsert([{ id, vector, metadata, text, ttlMs }], { dimensions, metric, vectorType, analyzer, pathOf: () => '', ...model });
  }

  /** Embed the texts of records without vectors, then add them all under the model's options (cosine); the model is then the index's. */
  private async withModel(
    records: (t.VectorRecord | t.TextRecord)[],
    options: t.SessionOptions,
    path: (i: number) => string,
    apply: (records: t.VectorRecord[], options: t.SessionOptions, model: ModelOptions) => AddResult,
  ): Promise<AddResult> {
    const rest = modelOptions(options);
    const texts = textsOf(records, path);
    const { vectors } = texts.size > 0 ? await this.embed([...texts.values()]) : { vectors: [] };
    // The index's config lock fixes the model, as the server's does (409 EMBEDDING_LOCKED, 400 NO_EMBEDDING_MODEL).
    const model: ModelOptions = { ...(options.embedding ? { embedding: options.embedding } : {}), ...(texts.size > 0 ? { embeddedWith: MODEL_NAME } : {}) };
    return apply(withVectors(records, texts, vectors), rest, model);
  }

  /** Query vectors for a search: text queries embedded, which needs the index's model. */
  private async queryVectors(queries: (t.Vector | t.TextQuery)[]): Promise<number[][]> {
    const texts = queries.filter(isTextQuery).map((q) => q.text);
    if (texts.length > 0 && this.index.getConfig().embedding !== MODEL_NAME) throw noModelError();
    const { vectors } = texts.length > 0 ? await this.embed(texts) : { vectors: [] };
    let k = 0;
    return queries.map((q) => Array.from(isTextQuery(q) ? vectors[k++] : q));
  }

  /** Check `records` as one batch, then apply them as the server's add and add-many do. */
  private upsert(records: VectorInput[], options: UpsertOptions): { added: number; replaced: number } {
    this.index.removeAllExpired();
    return run(() => applyToIndex(this.index, { t: 'upsert', plan: this.index.prepareUpsert(records, options) }));
  }

  /** One id as POST /vectors/delete, a list as /vectors/delete-many (within its batch cap). */
  delete(ids: string | string[]): { deleted: number; notFound: string[] } {
    const list =
      typeof ids === 'string' ? [parse(this.schemas.DeleteRequestSchema, { id: ids }).id] : parse(this.schemas.DeleteManyRequestSchema, { ids }).ids!;
    this.index.removeAllExpired();
    return applyToIndex(this.index, { t: 'delete', ids: list });
  }

  /** Renew records, as POST /vectors/touch: each live one with a ttl expires ttlMs from now; the live ones found, and the ids not found. */
  touch(ids: string[]): { touched: number; notFound: string[] } {
    const body = parse(this.schemas.TouchRequestSchema, { ids });
    const { renew, touched, notFound } = touchChange(this.index, body.ids, this.index.now());
    if (renew) applyToIndex(this.index, renew);
    return { touched, notFound };
  }

  /** Delete every vector a (non-empty) filter matches, as POST /vectors/delete-many with filter. */
  deleteByFilter(filter: t.Metadata): { deleted: number; notFound: string[] } {
    const body = parse(this.schemas.DeleteManyRequestSchema, { filter });
    return run(() => applyToIndex(this.index, deleteMatchingChange(this.index, body.filter!)));
  }

  /** How many vectors match `filter` (all without one). */
  count(filter?: t.Metadata): number {
    const body = parse(this.schemas.CountRequestSchema, { filter });
    return run(() => this.index.count(body.filter));
  }

  /** Counts of each value at a metadata path among the vectors `filter` matches, as POST /vectors/facet. */
  facet(path: string, options: t.FacetOptions = {}): Omit<r.FacetResponse, 'success' | 'session' | 'metrics'> {
    const body = parse(this.schemas.FacetRequestSchema, { path, ...options });
    return run(() => runSteps(this.index.facetSteps(body)));
  }

  /** One page in insertion order (or orderBy's), as POST /vectors/list. */
  list(options: t.ListOptions = {}): { vectors: t.ListedVector[]; nextCursor: string | null } {
    const { vectorEncoding, ...rest } = parse(this.schemas.ListRequestSchema, options);
    const page = run(() => this.index.list(rest));
    return { vectors: page.vectors.map((listed) => listedVector(listed, vectorEncoding)), nextCursor: page.nextCursor };
  }

  getMetadata(id: string): t.Metadata | undefined {
    return this.index.getMetadata(id)?.value();
  }

  /** Apply an RFC 7396 merge patch to a vector's metadata; the result meets metadata/set's limits. Returns it (undefined: no such id). */
  patchMetadata(id: string, patch: t.Metadata): t.Metadata | undefined {
    const body = parse(this.schemas.PatchMetadataRequestSchema, { id, patch });
    const change = run(() => patchChange(this.index, body.id, (current) => patchedMetadata(this.schemas, current, body.patch)));
    if (!change) return undefined;
    applyToIndex(this.index, change);
    return change.metadata;
  }

  /** The nearest vectors to `queryVector`; with `text`, a hybrid search, as the client's search. A `{ text }` query: its embedding (a Promise). */
  search(queryVector: t.Vector, options: t.GroupedSearchOptions): LocalGroupedSearchResult;
  search(queryVector: t.Vector, options?: t.SearchOptions): LocalSearchResult;
  search(query: t.TextQuery, options: t.GroupedSearchOptions): Promise<LocalGroupedSearchResult>;
  search(query: t.TextQuery, options?: t.SearchOptions): Promise<LocalSearchResult>;
  search(query: t.Vector | t.TextQuery, options: t.SearchOptions = {}): LocalAnswer | Promise<LocalAnswer> {
    if (isTextQuery(query)) return this.queryVectors([query]).then(([vector]) => this.searchOne({ ...searchBody(options), queryVector: vector }));
    return this.searchOne({ ...searchBody(options), queryVector: Array.from(query) });
  }

  /** Search with the stored vector `id` as the query; `id` itself is left out of the results. */
  searchById(id: string, options: t.GroupedSearchOptions): LocalGroupedSearchResult;
  searchById(id: string, options?: t.SearchOptions): LocalSearchResult;
  searchById(id: string, options: t.SearchOptions = {}): LocalAnswer {
    return this.searchOne({ ...searchBody(options), queryId: id });
  }

  /** Keyword search: the vectors whose texts best match `text` by BM25. */
  searchText(text: string, options: t.TextSearchOptions = {}): LocalSearchResult {
    return this.searchOne({ ...options, queryText: text }) as LocalSearchResult;
  }

  searchMany(queryVectors: t.Vector[], options: t.GroupedSearchManyOptions): LocalGroupedSearchManyResult;
  searchMany(queryVectors: t.Vector[], options?: t.SearchManyOptions): LocalSearchManyResult;
  searchMany(queries: (t.Vector | t.TextQuery)[], options: t.GroupedSearchManyOptions): Promise<LocalGroupedSearchManyResult>;
  searchMany(queries: (t.Vector | t.TextQuery)[], options?: t.SearchManyOptions): Promise<LocalSearchManyResult>;
  searchMany(queries: (t.Vector | t.TextQuery)[], options: t.SearchManyOptions = {}): LocalManyAnswer | Promise<LocalManyAnswer> {
    if (Array.isArray(queries) && queries.some(isTextQuery))
      return this.queryVectors(queries).then((vectors) => this.searchBatch({ ...searchManyBody(options), queryVectors: vectors }));
    return this.searchBatch({ ...searchManyBody(options), queryVectors: (queries as t.Vector[]).map((q) => Array.from(q)) });
  }

  searchManyByIds(ids: string[], options: t.GroupedSearchManyOptions): LocalGroupedSearchManyResult;
  searchManyByIds(ids: string[], options?: t.SearchManyOptions): LocalSearchManyResult;
  searchManyByIds(ids: string[], options: t.SearchManyOptions = {}): LocalManyAnswer {
    return this.searchBatch({ ...searchManyBody(options), queryIds: ids });
  }

  /** One keyword search per text. */
  searchManyTexts(texts: string[], options: t.TextSearchOptions = {}): LocalSearchManyResult {
    return this.searchBatch({ ...options, queryTexts: texts }) as LocalSearchManyResult;
  }

  /** A body of POST /search, checked by its schema and answered as the route answers it. */
  private searchOne(body: Record<string, unknown>): LocalAnswer {
    const out = this.runSearch(searchCall(parse(this.schemas.SearchRequestSchema, body)));
    if (out.groups) return { groups: plainGroups(out.groups[0]), stats: out.stats };
    return { results: plainHits(out.results[0]), stats: out.stats };
  }

  /** A body of POST /search-many, likewise. */
  private searchBatch(body: Record<string, unknown>): LocalManyAnswer {
    const out = this.runSearch(searchManyCall(parse(this.schemas.SearchManyRequestSchema, body)));
    if (out.groups) return { groups: out.groups.map(plainGroups), stats: out.stats };
    return { results: out.results.map(plainHits), stats: out.stats };
  }

  private runSearch(call: SearchCall) {
    // BM25's N, df and avgdl count only live texts, as the server's (which sweeps first too).
    if (call.options.queryTexts !== undefined) this.index.removeAllExpired();
    return run(() => (call.ids ? this.index.searchByIds(call.ids, call.options) : this.index.search(call.queries, call.options)));
  }

  /** The whole index in the export format of GET /vectors/export (NDJSON), base64 vectors unless asked otherwise. */
  export(options: { vectorEncoding?: t.VectorEncoding } = {}): string {
    return exportText(this.index.openExport(), options.vectorEncoding ?? 'base64');
  }

  /**
   * Import an export (GET /vectors/export, or export() of another index):
   * a fetch Response, its text, its bytes or a stream of them. Validated
   * whole, then applied all or nothing with add-many's rules.
   */
  async importFrom(source: ExportSource): Promise<{ added: number; replaced: number }> {
    const reader = new ImportReader(this.schemas);
    try {
      for await (const chunk of chunksOf(source)) reader.push(chunk);
    } catch (err) {
      throw err instanceof ApiError ? toSdkError(err) : err;
    }
    const parsed = run(() => reader.finish());
    this.index.removeAllExpired();
    return run(() => {
      const plan = prepareImport(this.index, parsed);
      return plan ? applyToIndex(this.index, { t: 'import', plan }) : { added: 0, replaced: 0 };
    });
  }

  /** A new index holding an export (e.g. `await LocalIndex.fromExport(await fetch(...))`, or client.exportTo). */
  static async fromExport(source: ExportSource, options: LocalIndexOptions = {}): Promise<LocalIndex> {
    const index = await LocalIndex.load(options);
    await index.importFrom(source);
    return index;
  }

  /** Remove every vector; dimensions and metric stay. */
  clear(): number {
    return applyToIndex(this.index, { t: 'clear' });
  }
  /** Drop everything, configuration (and embedding model) included. */
  reset(): number {
    return applyToIndex(this.index, { t: 'reset' });
  }
}

/** The model an add names or embedded its texts with, for the index's config lock. */
type ModelOptions = Pick<UpsertOptions, 'embedding' | 'embeddedWith'>;

function listedVector(listed: ListedVector, encoding: t.VectorEncoding): t.ListedVector {
  const out: t.ListedVector = { id: listed.id };
  if (listed.vector) out.vector = encoding === 'base64' ? encodeFloat32Base64(listed.vector) : Array.from(listed.vector);
  if (listed.metadata) out.metadata = listed.metadata.value();
  if (listed.text !== undefined) out.text = listed.text?.value() ?? null;
  return Object.assign(out, ttlFields(listed));
}

/** Hits as the server answers them: metadata and text as values (the index hands out its stored JSON), fields in the same order. */
const plainHits = (hits: SearchHit[]): t.SearchHit[] =>
  hits.map(({ metadata, text, ...hit }) => {
    const out: t.SearchHit = { ...hit };
    if (metadata) out.metadata = metadata.value();
    if (text !== undefined) out.text = text?.value() ?? null;
    return out;
  });

/** Groups as the server answers them. */
const plainGroups = (groups: SearchGroup[]): t.SearchGroup[] => groups.map(({ value, hits }) => ({ value, hits: plainHits(hits) }));

const toSdkError = (err: ApiError) => new TempvecError(err.status, err.code, err.message, err.details);

/** The index layer throws the server's ApiError; callers of the SDK catch TempvecError. */
function run<T>(fn: () => T): T {
  try {
    return fn();
  } catch (err) {
    if (err instanceof ApiError) throw toSdkError(err);
    throw err;
  }
}

/** Validate with a request schema: VALIDATION_ERROR or BATCH_TOO_LARGE with the details the server answers. */
function parse<S extends v.GenericSchema>(schema: S, input: unknown): v.InferOutput<S> {
  const result = v.safeParse(schema, input);
  if (result.success) return result.output;
  throw toSdkError(requestError(result.issues, 'input'));
}
