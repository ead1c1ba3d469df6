// TempvecEmbeddings: a LangChain.js Embeddings over a tempvec server's
// POST /embed (its model: use-lite-512, or its EMBEDDING_URL endpoint's), so
// any LangChain vector store or chain can embed with the server's model. A
// call's texts go in requests within the server's /limits `embedding`
// (texts and bytes per request), one at a time.
import { Embeddings, type EmbeddingsParams } from '@langchain/core/embeddings';
import { TempvecClient } from '../sdk/client.js';
import type { Limits } from '../sdk/types.js';

export interface TempvecEmbeddingsArgs extends EmbeddingsParams {
  /** A client to use (its token); else one is made from baseUrl and token. */
  client?: TempvecClient;
  /** The tempvec server, e.g. http://127.0.0.1:3000 (needed without `client`). */
  baseUrl?: string;
  token?: string;
}

const utf8Bytes = (text: string) => new TextEncoder().encode(text).byteLength;

export class TempvecEmbeddings extends Embeddings {
  readonly client: TempvecClient;
  private limitsOnce: Promise<Limits['embedding']> | undefined;

  constructor(args: TempvecEmbeddingsArgs = {}) {
    super(args);
    this.client = args.client ?? new TempvecClient({ baseUrl: args.baseUrl, token: args.token });
  }

  /** One vector per text, in order, from the server's model (unit length). */
  async embedDocuments(texts: string[]): Promise<number[][]> {
    const vectors: number[][] = [];
    for (const batch of await this.batches(texts)) {
      // Not through this.caller: it would retry a 4xx (a text too long) six times; errors are the client's TempvecError.
      const { vectors: got } = await this.client.embed(batch);
      for (const vector of got) vectors.push(Array.from(vector));
    }
    return vectors;
  }

  async embedQuery(text: string): Promise<number[]> {
    const [vector] = await this.embedDocuments([text]);
    return vector;
  }

  /** The texts cut into requests of at most the server's maxTexts texts and maxBytes bytes (a text past maxTextBytes goes alone, for the server to refuse). */
  private async batches(texts: string[]): Promise<string[][]> {
    const { maxTexts, maxBytes } = await this.limits();
    const batches: string[][] = [];
    let batch: string[] = [];
    let bytes = 0;
    for (const text of texts) {
      const size = utf8Bytes(text);
      if (batch.length > 0 && (batch.length === maxTexts || bytes + size > maxBytes)) {
        batches.push(batch);
        batch = [];
        bytes = 0;
      }
      batch.push(text);
      bytes += size;
    }
    if (batch.length > 0) batches.push(batch);
    return batches;
  }

  /** The server's embedding limits, asked once. */
  private limits(): Promise<Limits['embedding']> {
    this.limitsOnce ??= this.client.limits().then((answer) => answer.limits.embedding);
    return this.limitsOnce;
  }
}
