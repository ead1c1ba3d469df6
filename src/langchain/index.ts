// Entry `tempvec/langchain` (dist/langchain/index.js): needs @langchain/core installed.
export { TempvecEmbeddings } from './embeddings.js';
export type { TempvecEmbeddingsArgs } from './embeddings.js';
export { TempvecRetriever, TempvecVectorStore } from './vector-store.js';
export type { TempvecFilter, TempvecHybridSearchOptions, TempvecRetrieverInput, TempvecVectorStoreArgs } from './vector-store.js';
