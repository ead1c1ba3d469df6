// Entry of the bundle served at /sdk.js (and of its declarations, /sdk.d.ts).
export { TempvecClient } from './client.js';
export { SessionExpiredError, TempvecError } from './errors.js';
export type { ClientOptions } from './client.js';
export { LocalIndex } from './local-index.js';
/** The terms an analyzer makes of a text, as the server and LocalIndex index and query them. */
export { analyze as analyzeText } from '../index/text/analyzer.js';
export type { ExportSource } from './export-source.js';
export type { KernelSource } from './local-kernel.js';
export type {
  LocalGroupedSearchManyResult,
  LocalGroupedSearchResult,
  LocalIndexOptions,
  LocalSearchManyResult,
  LocalSearchResult,
} from './local-index.js';
export type * from './response-types.js';
export type * from './types.js';
