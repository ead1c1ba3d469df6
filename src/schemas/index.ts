// All request schemas for one configuration, and the types derived from them.
import type * as v from 'valibot';
import type { Config } from '../config.js';
import { searchSchemas } from './search.js';
import { vectorSchemas } from './vectors.js';

export function requestSchemas(config: Config) {
  return { ...vectorSchemas(config), ...searchSchemas(config) };
}
export type RequestSchemas = ReturnType<typeof requestSchemas>;

export type AddRequest = v.InferOutput<RequestSchemas['AddRequestSchema']>;
export type AddManyRequest = v.InferOutput<RequestSchemas['AddManyRequestSchema']>;
export type SearchRequest = v.InferOutput<RequestSchemas['SearchRequestSchema']>;
export type SearchManyRequest = v.InferOutput<RequestSchemas['SearchManyRequestSchema']>;
