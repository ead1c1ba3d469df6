// TempvecVectorStore: a LangChain.js VectorStore over one tempvec session
// (entry `tempvec/langchain`; @langchain/core is an optional peer dependency,
// imported by this folder only, so neither the server nor /sdk.js load it).
// A document's text is stored as its vector's `text` (indexed for keyword
// search, not held to the metadata limit), its id as the vector id; filters
// are tempvec's filter language, as in /search. Beside similarity and MMR (the server's, exact),
// the store searches by keywords (BM25) and hybrid (both, fused), and
// asRetriever({ searchType: 'hybrid' }) retrieves that way. Without an
// Embeddings the server embeds (texts in, texts out): documents are sent as
// {id, text, metadata} records and queries as {text}.
import type { CallbackManagerForRetrieverRun, Callbacks } from '@langchain/core/callbacks/manager';
import { Document, type DocumentInterface } from '@langchain/core/documents';
import type { EmbeddingsInterface } from '@langchain/core/embeddings';
import type { BaseRetrieverInput } from '@langchain/core/retrievers';
import { VectorStore, VectorStoreRetriever, type MaxMarginalRelevanceSearchOptions } from '@langchain/core/vectorstores';
import { TempvecClient } from '../sdk/client.js';
import { TempvecError } from '../sdk/errors.js';
import { TempvecEmbeddings } from './embeddings.js';
import type { Analyzer, Fusion, Limits, Metadata, Metric, SearchHit, TextQuery, TextRecord, Vector, VectorRecord, VectorType } from '../sdk/types.js';

/** tempvec's filter: metadata keys (dotted paths) and values or operators ($eq ... $exists, $and, $or, $not). */
export type TempvecFilter = Metadata;

export interface TempvecVectorStoreArgs {
  /** A client to use (its session, its token); else one is made from baseUrl and token. */
  client?: TempvecClient;
  /** The tempvec server, e.g. http://127.0.0.1:3000 (needed without `client`). */
  baseUrl?: string;
  /** Reuse a session; without one the first call gets a new token. */
  token?: string;
  /** Fixed by the first add: cosine (default; scores are similarities, higher first) or l2 (distances, lower first). */
  metric?: Metric;
  vectorType?: VectorType;
  /** How texts become terms for keyword and hybrid search, fixed by the first add: standard (default) or english (stop words, stems). */
  analyzer?: Analyzer;
}

/** Options of a hybrid search: how to fuse (rrf, k 60, by default) and how many candidates each arm brings. */
export interface TempvecHybridSearchOptions {
  filter?: TempvecFilter;
  fusion?: Fusion;
  candidatePool?: number;
}

/** asHybridRetriever's fields: hybrid (vector and keyword, fused) or keyword (BM25) search. */
export type TempvecRetrieverInput = BaseRetrieverInput &
  TempvecHybridSearchOptions & {
    searchType: 'keyword' | 'hybrid';
    k?: number;
  };

export class TempvecVectorStore extends VectorStore {
  declare FilterType: TempvecFilter;
  readonly client: TempvecClient;
  private readonly sessionOptions: { metric?: Metric; vectorType?: VectorType; analyzer?: Analyzer };
  private limitsOnce: Promise<Limits> | undefined;
  /** No Embeddings given: the server embeds documents and queries (this.embeddings is then a TempvecEmbeddings over /embed). */
  readonly serverEmbeds: boolean;

  _vectorstoreType(): string {
    return 'tempvec';
  }

  /** With `embeddings` null or undefined, the server embeds: `new TempvecVectorStore(null, { baseUrl })`. */
  constructor(embeddings: EmbeddingsInterface | null | undefined, args: TempvecVectorStoreArgs = {}) {
    const client = args.client ?? new TempvecClient({ baseUrl: args.baseUrl, token: args.token });
    super(embeddings ?? new TempvecEmbeddings({ client }), args);
    this.client = client;
    this.serverEmbeds = !embeddings;
    this.sessionOptions = { metric: args.metric, vectorType: args.vectorType, analyzer: args.analyzer };
  }

  /** Store vectors with their documents; ids from options.ids, else each document's id, else new UUIDs. */
  async addVectors(vectors: number[][], documents: DocumentInterface[], options: { ids?: string[] } = {}): Promise<string[]> {
    if (vectors.length !== documents.length) throw new Error(`addVectors: ${vectors.length} vectors for ${documents.length} documents`);
    if (options.ids && options.ids.length !== documents.length) throw new Error(`addVectors: ${options.ids.length} ids for ${documents.length} documents`);
    const ids = documents.map((doc, i) => options.ids?.[i] ?? doc.id ?? globalThis.crypto.randomUUID());
    const records: VectorRecord[] = documents.map((doc, i) => ({
      id: ids[i],
      vector: Float32Array.from(vectors[i]),
      metadata: doc.metadata,
      text: doc.pageContent,
    }));
    const batch = (await this.limits()).batch.addMany;
    for (let i = 0; i < records.length; i += batch) await this.client.addMany(records.slice(i, i + batch), this.sessionOptions);
    return ids;
  }

  /** Embed the documents' text and store them (ids kept, see addVectors); without an Embeddings they go as text and the server embeds them. */
  async addDocuments(documents: DocumentInterface[], options: { ids?: string[] } = {}): Promise<string[]> {
    if (this.serverEmbeds) return this.addTexts(documents, options);
    const vectors = await this.embeddings.embedDocuments(documents.map((doc) => doc.pageContent));
    return this.addVectors(vectors, documents, options);
  }

  /** Store documents as {id, text, metadata}: each with the server's embedding of its text. */
  private async addTexts(documents: DocumentInterface[], options: { ids?: string[] }): Promise<string[]> {
    if (options.ids && options.ids.length !== documents.length) throw new Error(`addDocuments: ${options.ids.length} ids for ${documents.length} documents`);
    const ids = documents.map((doc, i) => options.ids?.[i] ?? doc.id ?? globalThis.crypto.randomUUID());
    const records: TextRecord[] = documents.map((doc, i) => ({ id: ids[i], text: doc.pageContent, metadata: doc.metadata }));
    const batch = (await this.limits()).batch.addMany;
    for (let i = 0; i < records.length; i += batch) await this.client.addMany(records.slice(i, i + batch), this.sessionOptions);
    return ids;
  }

  /** The k nearest documents to `query`; without an Embeddings the server embeds it (one request, `queryVector: {text}`). */
  async similaritySearch(query: string, k = 4, filter?: TempvecFilter): Promise<DocumentInterface[]> {
    return (await this.similaritySearchWithScore(query, k, filter)).map(([doc]) => doc);
  }

  async similaritySearchWithScore(query: string, k = 4, filter?: TempvecFilter): Promise<[DocumentInterface, number][]> {
    return this.searchWithScore(await this.queryOf(query), k, filter);
  }

  /** The k nearest documents with their scores (cosine similarity, or l2 distance), exact, filtered first. */
  async similaritySearchVectorWithScore(query: number[], k: number, filter?: TempvecFilter): Promise<[DocumentInterface, number][]> {
    return this.searchWithScore(Float32Array.from(query), k, filter);
  }

  private async searchWithScore(query: Vector | TextQuery, k: number, filter?: TempvecFilter): Promise<[DocumentInterface, number][]> {
    const { results } = await this.client.search(query, { topK: k, ...INCLUDE, ...(filter ? { filter } : {}) });
    return results.map((hit) => [toDocument(hit), hit.score]);
  }

  /** A query as the server takes it: its text, for the server to embed, or its vector by the Embeddings given. */
  private async queryOf(query: string): Promise<Vector | TextQuery> {
    return this.serverEmbeds ? { text: query } : Float32Array.from(await this.embeddings.embedQuery(query));
  }

  /** The k documents whose text best matches `query` by BM25 (keyword search), with their scores; filtered first. */
  async keywordSearchWithScore(query: string, k = 4, filter?: TempvecFilter): Promise<[DocumentInterface, number][]> {
    const { results } = await this.client.searchText(query, { topK: k, ...INCLUDE, ...(filter ? { filter } : {}) });
    return results.map((hit) => [toDocument(hit), hit.score]);
  }

  /**
   * Hybrid search: the query embedded and ranked by vector similarity, and
   * by BM25 over the texts, the two rankings fused (reciprocal rank fusion
   * by default); each score is the fused one. A query with no terms (only
   * stop words under the english analyzer) is ranked by similarity alone.
   */
  async hybridSearchWithScore(query: string, k = 4, options: TempvecHybridSearchOptions = {}): Promise<[DocumentInterface, number][]> {
    const { filter, fusion, candidatePool } = options;
    const vector = await this.queryOf(query);
    const common = { topK: k, ...INCLUDE, ...(filter ? { filter } : {}), ...(candidatePool ? { candidatePool } : {}) };
    try {
      const { results } = await this.client.search(vector, { ...common, text: query, ...(fusion ? { fusion } : {}) });
      return results.map((hit) => [toDocument(hit), hit.score]);
    } catch (err) {
      if (!(err instanceof TempvecError && err.code === 'QUERY_TEXT_EMPTY')) throw err;
      const { results } = await this.client.search(vector, common);
      return results.map((hit) => [toDocument(hit), hit.score]);
    }
  }

  /**
   * A retriever by hybrid search (`searchType: 'hybrid'`, the default) or by
   * keywords alone (`'keyword'`): `store.asHybridRetriever({ k: 8 })`. It is
   * a VectorStoreRetriever, so it goes wherever asRetriever()'s does.
   */
  asHybridRetriever(fields: Partial<TempvecRetrieverInput> = {}): TempvecRetriever<this> {
    return new TempvecRetriever<this>({ ...fields, searchType: fields.searchType ?? 'hybrid', vectorStore: this });
  }

  /** Delete documents by id (ids not stored are ignored). */
  async delete(params: { ids?: string[] } = {}): Promise<void> {
    if (!params.ids) throw new Error('TempvecVectorStore.delete needs { ids }');
    const batch = (await this.limits()).batch.deleteMany;
    for (let i = 0; i < params.ids.length; i += batch) await this.client.deleteMany(params.ids.slice(i, i + batch));
  }

  /**
   * Maximal marginal relevance, on the server (/search's `mmr`): k picked
   * greedily from the exact fetchK nearest (filtered), each maximising
   * lambda x its similarity to the query - (1 - lambda) x its greatest
   * similarity to one already picked (lambda 1: relevance only, 0: diversity
   * only; tempvec's diversity is 1 - lambda). Similarity between documents is
   * the session metric's (cosine, or minus the l2 distance). Without an
   * Embeddings the server embeds the query. asRetriever({ searchType: 'mmr',
   * searchKwargs: { fetchK, lambda } }) searches this way.
   */
  async maxMarginalRelevanceSearch(
    query: string,
    options: MaxMarginalRelevanceSearchOptions<TempvecFilter>,
    _callbacks?: Callbacks,
  ): Promise<DocumentInterface[]> {
    const { results } = await this.client.search(await this.queryOf(query), {
      topK: options.k,
      mmr: mmrOf(options),
      ...INCLUDE,
      ...(options.filter ? { filter: options.filter } : {}),
    });
    return results.map(toDocument);
  }

  /** `embeddings` null: the server embeds the texts. */
  static async fromTexts(
    texts: string[],
    metadatas: object[] | object,
    embeddings: EmbeddingsInterface | null,
    args: TempvecVectorStoreArgs = {},
  ): Promise<TempvecVectorStore> {
    const docs = texts.map((pageContent, i) => new Document({ pageContent, metadata: Array.isArray(metadatas) ? (metadatas[i] ?? {}) : metadatas }));
    return TempvecVectorStore.fromDocuments(docs, embeddings, args);
  }

  static async fromDocuments(
    docs: DocumentInterface[],
    embeddings: EmbeddingsInterface | null,
    args: TempvecVectorStoreArgs = {},
  ): Promise<TempvecVectorStore> {
    const store = new TempvecVectorStore(embeddings, args);
    await store.addDocuments(docs);
    return store;
  }

  /** The server's batch caps, asked once. */
  private limits(): Promise<Limits> {
    this.limitsOnce ??= this.client.limits().then((answer) => answer.limits);
    return this.limitsOnce;
  }
}

/** LangChain's MMR options as tempvec's `mmr`: diversity = 1 - lambda (default 0.5), candidates = fetchK (default 20). */
function mmrOf(options: { fetchK?: number; lambda?: number }): { diversity: number; candidates: number } {
  return { diversity: 1 - (options.lambda ?? 0.5), candidates: options.fetchK ?? 20 };
}

/** What every search of the store asks back: a Document needs both. */
const INCLUDE = { includeMetadata: true, includeText: true } as const;

/** A hit back as a Document. */
function toDocument(hit: SearchHit): Document {
  return new Document({ id: hit.id, pageContent: hit.text ?? '', metadata: hit.metadata ?? {} });
}

/** The retriever of asRetriever({ searchType: 'keyword' | 'hybrid' }). */
export class TempvecRetriever<V extends TempvecVectorStore> extends VectorStoreRetriever<V> {
  declare searchType: 'keyword' | 'hybrid';
  private readonly hybrid: TempvecHybridSearchOptions;

  constructor(fields: TempvecRetrieverInput & { vectorStore: V }) {
    const { searchType, fusion, candidatePool, ...rest } = fields;
    super({ ...rest, searchType: 'similarity' });
    this.searchType = searchType;
    this.hybrid = { filter: fields.filter, fusion, candidatePool };
  }

  async _getRelevantDocuments(query: string, _runManager?: CallbackManagerForRetrieverRun): Promise<DocumentInterface[]> {
    const hits =
      this.searchType === 'keyword'
        ? await this.vectorStore.keywordSearchWithScore(query, this.k, this.filter)
        : await this.vectorStore.hybridSearchWithScore(query, this.k, this.hybrid);
    return hits.map(([doc]) => doc);
  }
}
