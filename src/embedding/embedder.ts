// What turns texts into vectors for the server: the builtin model on worker
// threads (embedding-pool.ts), or an OpenAI-compatible endpoint (openai-embedder.ts). Callers see
// only this interface: the model's name, its dimensions, and vectors.

/** The builtin model's name in the API (sessions, /embed, /limits). */
export { BUILTIN_EMBEDDING_MODEL as BUILTIN_MODEL } from '../config/spec-limits.js';

import type { EmbeddingModel } from '../config/spec-limits.js';

export interface Embedder {
  /** The model's name as the API reports it. */
  readonly model: EmbeddingModel;
  /** Floats per vector. */
  readonly dimensions: number;
  /**
   * One unit vector per text, in order. `owner` (a token's hash) keys the
   * fairness between callers; throws ApiError 503 when the embedder is
   * saturated or its worker failed.
   */
  embed(texts: readonly string[], owner: string): Promise<Float32Array[]>;
}
