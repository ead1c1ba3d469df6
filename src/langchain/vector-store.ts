// TempvecVectorStore: a LangChain.js VectorStore over one tempvec session
// (entry `tempvec/langchain`; @langchain/core is an optional peer dependency,
// imported by this folder only, so neither the server nor /sdk.js load it).
// A document's text is stored in its vector's metadata under `textKey`, its
// id as the vector id; filters are tempvec's filter language, as in /search.
import type { Callbacks } from '@langchain/core/callbacks/manager';
import { Document, type DocumentInterface } from '@langchain/core/documents';
import type { EmbeddingsInterface } from '@langchain/core/embeddings';
import { maximalMarginalRelevance } from '@langchain/core/utils/math';
import { VectorStore, type MaxMarginalRelevanceSearchOptions } from '@langchain/core/vectorstores';
import { TempvecClient } from '../sdk/client.js';
import type { Limits, Metadata, Metric, VectorRecord, VectorType } from '../sdk/types.js';

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
  /** Metadata key that holds the document text (default "pageContent"). */
  textKey?: string;
}

export class TempvecVectorStore extends VectorStore {
  declare FilterType: TempvecFilter;
  readonly client: TempvecClient;
  readonly textKey: string;
  private readonly sessionOptions: { metric?: Metric; vectorType?: VectorType };
  private limitsOnce: Promise<Limits> | undefined;

  _vectorstoreType(): string {
    return 'tempvec';
  }

  constructor(embeddings: EmbeddingsInterface, args: TempvecVectorStoreArgs = {}) {
    super(embeddings, args);
    this.client = args.client ?? new TempvecClient({ baseUrl: args.baseUrl, token: args.token });
    this.textKey = args.textKey ?? 'pageContent';
    this.sessionOptions = { metric: args.metric, vectorType: args.vectorType };
  }

  /** Store vectors with their documents; ids from options.ids, else each document's id, else new UUIDs. */
  async addVectors(vectors: number[][], documents: DocumentInterface[], options: { ids?: string[] } = {}): Promise<string[]> {
    if (vectors.length !== documents.length) throw new Error(`addVectors: ${vectors.length} vectors for ${documents.length} documents`);
    if (options.ids && options.ids.length !== documents.length) throw new Error(`addVectors: ${options.ids.length} ids for ${documents.length} documents`);
    const ids = documents.map((doc, i) => options.ids?.[i] ?? doc.id ?? globalThis.crypto.randomUUID());
    const records: VectorRecord[] = documents.map((doc, i) => ({
      id: ids[i],
      vector: Float32Array.from(vectors[i]),
      metadata: { ...doc.metadata, [this.textKey]: doc.pageContent },
    }));
    const batch = (await this.limits()).batch.addMany;
    for (let i = 0; i < records.length; i += batch) await this.client.addMany(records.slice(i, i + batch), this.sessionOptions);
    return ids;
  }

  /** Embed the documents' text and store them (ids kept, see addVectors). */
  async addDocuments(documents: DocumentInterface[], options: { ids?: string[] } = {}): Promise<string[]> {
    const vectors = await this.embeddings.embedDocuments(documents.map((doc) => doc.pageContent));
    return this.addVectors(vectors, documents, options);
  }

  /** The k nearest documents with their scores (cosine similarity, or l2 distance), exact, filtered first. */
  async similaritySearchVectorWithScore(query: number[], k: number, filter?: TempvecFilter): Promise<[DocumentInterface, number][]> {
    const { results } = await this.client.search(Float32Array.from(query), { topK: k, includeMetadata: true, ...(filter ? { filter } : {}) });
    return results.map((hit) => [this.toDocument(hit.id, hit.metadata), hit.score]);
  }

  /** Delete documents by id (ids not stored are ignored). */
  async delete(params: { ids?: string[] } = {}): Promise<void> {
    if (!params.ids) throw new Error('TempvecVectorStore.delete needs { ids }');
    const batch = (await this.limits()).batch.deleteMany;
    for (let i = 0; i < params.ids.length; i += batch) await this.client.deleteMany(params.ids.slice(i, i + batch));
  }

  /**
   * Maximal marginal relevance: the fetchK nearest (filtered) by the server,
   * then k of them chosen for relevance and diversity (lambda 1: relevance only, 0: diversity only).
   */
  async maxMarginalRelevanceSearch(query: string, options: MaxMarginalRelevanceSearchOptions<TempvecFilter>, _callbacks?: Callbacks): Promise<DocumentInterface[]> {
    const queryVector = await this.embeddings.embedQuery(query);
    const { results } = await this.client.search(Float32Array.from(queryVector), {
      topK: options.fetchK ?? 20, includeMetadata: true, ...(options.filter ? { filter: options.filter } : {}),
    });
    if (results.length === 0) return [];
    const { vectors } = await this.client.getMany(results.map((hit) => hit.id));
    const byId = new Map(vectors.map((stored) => [stored.id, stored.vector]));
    const chosen = maximalMarginalRelevance(queryVector, results.map((hit) => byId.get(hit.id) ?? []), options.lambda ?? 0.5, options.k);
    return chosen.map((i) => this.toDocument(results[i].id, results[i].metadata));
  }

  static async fromTexts(texts: string[], metadatas: object[] | object, embeddings: EmbeddingsInterface, args: TempvecVectorStoreArgs = {}): Promise<TempvecVectorStore> {
    const docs = texts.map((pageContent, i) => new Document({ pageContent, metadata: Array.isArray(metadatas) ? metadatas[i] ?? {} : metadatas }));
    return TempvecVectorStore.fromDocuments(docs, embeddings, args);
  }

  static async fromDocuments(docs: DocumentInterface[], embeddings: EmbeddingsInterface, args: TempvecVectorStoreArgs = {}): Promise<TempvecVectorStore> {
    const store = new TempvecVectorStore(embeddings, args);
    await store.addDocuments(docs);
    return store;
  }

  /** A stored vector back as a Document: its text out of the metadata. */
  private toDocument(id: string, stored: Metadata = {}): Document {
    const { [this.textKey]: text, ...metadata } = stored;
    return new Document({ id, pageContent: typeof text === 'string' ? text : '', metadata });
  }

  /** The server's batch caps, asked once. */
  private limits(): Promise<Limits> {
    this.limitsOnce ??= this.client.limits().then((answer) => answer.limits);
    return this.limitsOnce;
  }
}
