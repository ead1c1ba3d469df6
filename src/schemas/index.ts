// All request schemas for one configuration.
import type { Config } from '../config.js';
import { embedSchemas } from './embed.js';
import { searchSchemas } from './search.js';
import { vectorSchemas } from './vectors.js';

export function requestSchemas(config: Config) {
  return { ...vectorSchemas(config), ...searchSchemas(config), ...embedSchemas(config) };
}
export type RequestSchemas = ReturnType<typeof requestSchemas>;
