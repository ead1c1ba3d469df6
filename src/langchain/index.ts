// Entry `tempvec/langchain` (dist/langchain/index.js): needs @langchain/core installed.
export { TempvecVectorStore } from './vector-store.js';
export type { TempvecFilter, TempvecVectorStoreArgs } from './vector-store.js';
