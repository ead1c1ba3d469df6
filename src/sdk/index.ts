// Entry of the bundle served at /sdk.js.
export { TempvecClient, TempvecError } from './client.js';
export type { ClientOptions, Metadata, SearchOptions, Vector } from './client.js';
